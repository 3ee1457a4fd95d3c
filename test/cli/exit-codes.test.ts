/**
 * The CLI's exit codes: 2 for bad usage (unknown flag, a malformed value, a missing option), 1 for a
 * failure (an unknown key, a duplicate name), each with a message on stderr and nothing on stdout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../core/storage/index.ts';
import { runCli, tempHome, CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';

let home: string;
let cleanup: () => void;
beforeAll(() => {
  ({ home, cleanup } = tempHome());
  const store = Store.open(home);
  try {
    store.keys.create({ name: 'taken' });
  } finally {
    store.close();
  }
});
afterAll(() => cleanup?.());

const cli = (...args: string[]) => runCli(args, { home });

function keyNames(): string[] {
  const store = Store.open(home);
  try {
    return store.keys.list().map((k) => k.name);
  } finally {
    store.close();
  }
}

describe('exit code 2: bad usage', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('an unknown flag', async () => {
    const r = await cli('keys', 'create', '--name', 'Y', '--bogus');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--bogus');
  });

  it('--budget abc says which option is wrong', async () => {
    const r = await cli('keys', 'create', '--name', 'Y', '--budget', 'abc');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--budget');
    expect(r.stderr).not.toMatch(/NaN/);
  });

  it.each([
    [['keys', 'create', '--name', 'Y', '--models', ''], '--models'],
    [['providers', 'add', 'p9', '--type', 'openai', '--priority', 'abc', '--key-env', 'X'], '--priority'],
    [['start', '--port', 'abc'], '--port'],
    [['start', '--port', '99999'], '--port'],
    [['start', '--database', 'postgres://u:p@127.0.0.1:9/db'], '--redis'],
    [['start', '--database', 'mysql://x', '--redis', 'redis://127.0.0.1:9'], 'postgres://'],
  ])('%j names what is wrong', async (args, named) => {
    const r = await cli(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(named);
    expect(r.stderr).not.toMatch(/NaN|Invalid input/);
    expect(keyNames()).toEqual(['taken']);
  });

  it('a missing required option', async () => {
    const r = await cli('keys', 'create');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--name');
    expect(keyNames()).toEqual(['taken']);
  });
});

describe('exit code 1: failure', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('disabling an unknown key', async () => {
    const r = await cli('keys', 'disable', 'no-such-key');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('no-such-key');
  });

  it('creating a key whose name is taken', async () => {
    const r = await cli('keys', 'create', '--name', 'taken');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('taken');
    expect(r.stderr).toContain('gateway keys rotate taken');
    expect(keyNames()).toEqual(['taken']);
  });
});
