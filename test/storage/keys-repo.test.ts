import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashLocalKey } from '../../core/keys/local-key.ts';
import { Store } from '../../core/storage/index.ts';
import { StorageError } from '../../core/storage/db.ts';

let home: string;
let store: Store;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-keys-'));
  store = Store.open(home);
});
afterEach(() => {
  store.close();
  rmSync(home, { recursive: true, force: true });
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StorageError);
    return (error as StorageError).code;
  }
  return undefined;
}

describe('KeysRepo', () => {
  it('creates a key: the secret is returned once, only its hash and prefix are stored', () => {
    const { key, secret } = store.keys.create({ name: 'editor' });
    expect(secret).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
    expect(key).toMatchObject({
      name: 'editor',
      state: 'active',
      hash: hashLocalKey(secret),
      prefix: secret.slice(0, 10),
      budgetUsd: null,
      budgetPeriod: null,
      rpm: null,
      tpm: null,
      models: null,
      rotatedAt: null,
      deletedAt: null,
    });
    expect(key.id).toMatch(/^key_[A-Za-z0-9]{16}$/);
    expect(store.keys.findByHash(hashLocalKey(secret))?.id).toBe(key.id);
    expect(store.keys.findByName('editor')?.id).toBe(key.id);
  });

  it('stores limits, defaulting the budget period to total', () => {
    const { key } = store.keys.create({ name: 'agent', budgetUsd: 5, rpm: 60, tpm: 100_000, models: ['gpt-4o', 'gpt-4o'] });
    expect(key).toMatchObject({ budgetUsd: 5, budgetPeriod: 'total', rpm: 60, tpm: 100_000, models: ['gpt-4o'] });
    const daily = store.keys.create({ name: 'daily', budgetUsd: 1.5, budgetPeriod: 'daily' }).key;
    expect(daily).toMatchObject({ budgetUsd: 1.5, budgetPeriod: 'daily' });
  });

  it('rejects invalid names and limits', () => {
    expect(codeOf(() => store.keys.create({ name: '' }))).toBe('invalid_input');
    expect(codeOf(() => store.keys.create({ name: ' padded ' }))).toBe('invalid_input');
    expect(codeOf(() => store.keys.create({ name: 'x', rpm: 0 }))).toBe('invalid_input');
    expect(codeOf(() => store.keys.create({ name: 'x', tpm: 1.5 }))).toBe('invalid_input');
    expect(codeOf(() => store.keys.create({ name: 'x', budgetUsd: -1 }))).toBe('invalid_input');
    expect(codeOf(() => store.keys.create({ name: 'x', budgetPeriod: 'daily' }))).toBe('invalid_input');
    expect(codeOf(() => store.keys.create({ name: 'x', models: [] }))).toBe('invalid_input');
    expect(store.keys.list()).toEqual([]);
  });

  it('rejects a duplicate name among active and disabled keys', () => {
    store.keys.create({ name: 'cli' });
    expect(codeOf(() => store.keys.create({ name: 'cli' }))).toBe('key_exists');
    store.keys.setState('cli', 'disabled');
    expect(codeOf(() => store.keys.create({ name: 'cli' }))).toBe('key_exists');
  });

  it('disables and enables', () => {
    store.keys.create({ name: 'k' });
    expect(store.keys.setState('k', 'disabled').state).toBe('disabled');
    expect(store.keys.findByName('k')?.state).toBe('disabled');
    expect(store.keys.setState('k', 'active').state).toBe('active');
  });

  it('deletes by keeping the row, and frees the name for a new key', () => {
    const { key: old, secret: oldSecret } = store.keys.create({ name: 'tool', budgetUsd: 3 });
    const deleted = store.keys.delete('tool');
    expect(deleted).toMatchObject({ id: old.id, state: 'deleted' });
    expect(deleted.deletedAt).toBeTypeOf('number');
    expect(store.keys.findByName('tool')).toBeNull();
    expect(store.keys.findByHash(hashLocalKey(oldSecret))?.state).toBe('deleted');
    expect(store.keys.list().map((k) => k.id)).toEqual([]);
    expect(store.keys.list({ includeDeleted: true }).map((k) => k.id)).toEqual([old.id]);

    const { key: reborn } = store.keys.create({ name: 'tool' });
    expect(reborn.id).not.toBe(old.id);
    expect(store.keys.findByName('tool')?.id).toBe(reborn.id);
    // A second deletion of the same name is fine too.
    store.keys.delete('tool');
    expect(store.keys.list({ includeDeleted: true })).toHaveLength(2);
    expect(codeOf(() => store.keys.delete('tool'))).toBe('key_not_found');
  });

  it('rotates: same id, name, state and limits; new secret; the old one stops matching', () => {
    const created = store.keys.create({ name: 'rot', budgetUsd: 2, budgetPeriod: 'monthly', rpm: 10, models: ['m'] });
    store.keys.setState('rot', 'disabled');
    const rotated = store.keys.rotate('rot');
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.secret).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
    expect(rotated.key).toMatchObject({
      id: created.key.id,
      name: 'rot',
      state: 'disabled',
      budgetUsd: 2,
      budgetPeriod: 'monthly',
      rpm: 10,
      models: ['m'],
      hash: hashLocalKey(rotated.secret),
      prefix: rotated.secret.slice(0, 10),
      createdAt: created.key.createdAt,
    });
    expect(rotated.key.rotatedAt).toBeTypeOf('number');
    expect(store.keys.findByHash(hashLocalKey(created.secret))).toBeNull();
    expect(store.keys.findByHash(hashLocalKey(rotated.secret))?.id).toBe(created.key.id);
  });

  it('updates limits and names; null clears, undefined keeps', () => {
    store.keys.create({ name: 'a', budgetUsd: 5, budgetPeriod: 'daily', rpm: 5, models: ['x'] });
    store.keys.create({ name: 'b' });
    expect(store.keys.update('a', { tpm: 1000 })).toMatchObject({ budgetUsd: 5, budgetPeriod: 'daily', rpm: 5, tpm: 1000, models: ['x'] });
    expect(store.keys.update('a', { budgetUsd: null, models: null })).toMatchObject({ budgetUsd: null, budgetPeriod: null, models: null, rpm: 5 });
    expect(store.keys.update('a', { budgetUsd: 9 })).toMatchObject({ budgetUsd: 9, budgetPeriod: 'total' });
    expect(codeOf(() => store.keys.update('a', { name: 'b' }))).toBe('key_exists');
    expect(store.keys.update('a', { name: 'c' }).name).toBe('c');
    expect(store.keys.findByName('a')).toBeNull();
  });

  it('throws key_not_found for unknown names', () => {
    expect(codeOf(() => store.keys.setState('nope', 'active'))).toBe('key_not_found');
    expect(codeOf(() => store.keys.delete('nope'))).toBe('key_not_found');
    expect(codeOf(() => store.keys.rotate('nope'))).toBe('key_not_found');
    expect(codeOf(() => store.keys.update('nope', { rpm: 1 }))).toBe('key_not_found');
  });

  it('bumps the config version on every mutation, and not on reads or failures', () => {
    let v = store.configVersion();
    const expectBump = (fn: () => unknown) => {
      fn();
      expect(store.configVersion()).toBe(v + 1);
      v += 1;
    };
    expectBump(() => store.keys.create({ name: 'v' }));
    expectBump(() => store.keys.setState('v', 'disabled'));
    expectBump(() => store.keys.setState('v', 'active'));
    expectBump(() => store.keys.update('v', { rpm: 3 }));
    expectBump(() => store.keys.rotate('v'));
    expectBump(() => store.keys.delete('v'));
    store.keys.list({ includeDeleted: true });
    codeOf(() => store.keys.delete('v'));
    expect(store.configVersion()).toBe(v);
  });

  it('never writes a secret to the database file, its WAL or shared memory', () => {
    const secrets: string[] = [];
    for (let i = 0; i < 5; i++) secrets.push(store.keys.create({ name: `k${i}`, budgetUsd: i }).secret);
    secrets.push(store.keys.rotate('k0').secret);
    secrets.push(store.keys.rotate('k0').secret);
    store.keys.delete('k1');

    const db = path.join(home, 'gateway.db');
    const files = () => [db, `${db}-wal`, `${db}-shm`].filter(existsSync).map((f) => readFileSync(f));
    const scan = () => {
      const bytes = files();
      // The scan must be able to see what is stored: each current hash is there.
      expect(bytes.some((b) => b.includes(hashLocalKey(secrets[6])))).toBe(true);
      for (const secret of secrets) {
        for (const b of bytes) {
          expect(b.includes(secret)).toBe(false);
          // Nor the random part beyond the displayed prefix.
          expect(b.includes(secret.slice(10))).toBe(false);
        }
      }
    };
    scan(); // while open: rows still in the WAL
    store.close(); // checkpoints into the main file
    scan();
  });
});
