import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataPaths, ensureDataHome, resolveDataHome } from '../../core/home.ts';

describe('resolveDataHome', () => {
  it('uses GATEWAY_HOME when set, on every platform', () => {
    expect(resolveDataHome({ GATEWAY_HOME: '/tmp/gw-home', HOME: '/home/u' }, 'linux')).toBe('/tmp/gw-home');
    expect(resolveDataHome({ GATEWAY_HOME: '/tmp/gw-home' }, 'darwin')).toBe('/tmp/gw-home');
  });

  it('makes a relative GATEWAY_HOME absolute', () => {
    expect(resolveDataHome({ GATEWAY_HOME: 'rel/dir' }, 'linux')).toBe(path.resolve('rel/dir'));
  });

  it('follows XDG on Linux, ignoring a relative XDG_DATA_HOME', () => {
    expect(resolveDataHome({ HOME: '/home/u', XDG_DATA_HOME: '/data' }, 'linux')).toBe('/data/gateway');
    expect(resolveDataHome({ HOME: '/home/u' }, 'linux')).toBe('/home/u/.local/share/gateway');
    expect(resolveDataHome({ HOME: '/home/u', XDG_DATA_HOME: 'relative' }, 'linux')).toBe('/home/u/.local/share/gateway');
  });

  it('uses Application Support on macOS and APPDATA on Windows', () => {
    expect(resolveDataHome({ HOME: '/Users/u' }, 'darwin')).toBe('/Users/u/Library/Application Support/gateway');
    expect(resolveDataHome({ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32')).toBe('C:\\Users\\u\\AppData\\Roaming\\gateway');
  });
});

describe('ensureDataHome and dataPaths', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gw-home-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.skipIf(process.platform === 'win32')('creates the folder readable only by the user', () => {
    const home = path.join(dir, 'nested', 'gateway');
    expect(ensureDataHome(home)).toBe(home);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    // Idempotent.
    expect(() => ensureDataHome(home)).not.toThrow();
  });

  it('names the files in the home', () => {
    expect(dataPaths('/h')).toEqual({
      home: '/h',
      db: path.join('/h', 'gateway.db'),
      adminToken: path.join('/h', 'admin-token'),
      settings: path.join('/h', 'settings.json'),
      lock: path.join('/h', 'gateway.lock'),
    });
  });
});
