import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bumpConfigVersion, readConfigVersion } from '../../core/storage/config-version.ts';
import { openDatabase, type Database } from '../../core/storage/db.ts';

let dir: string;
let db: Database;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gw-config-version-'));
  db = openDatabase(path.join(dir, 'gateway.db'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('config version', () => {
  it('starts at 0 and counts bumps', () => {
    expect(readConfigVersion(db)).toBe(0);
    bumpConfigVersion(db);
    bumpConfigVersion(db);
    expect(readConfigVersion(db)).toBe(2);
  });

  it('rolls back with the change it belongs to', () => {
    expect(() =>
      db.transaction(() => {
        bumpConfigVersion(db);
        throw new Error('change failed');
      })(),
    ).toThrow('change failed');
    expect(readConfigVersion(db)).toBe(0);
  });

  it('is cheap enough to poll: a cached statement on a one-row lookup', () => {
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) readConfigVersion(db);
    // ~1-3 µs a read; the bound only catches a regression like re-preparing or scanning per read.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
