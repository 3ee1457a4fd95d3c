/**
 * `gateway keys ...` as a user runs it: the key alone on stdout, JSON listings, state changes,
 * rotation and deletion. Exit codes on bad usage and failure: exit-codes.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashLocalKey } from '../../core/keys/local-key.ts';
import { Store } from '../../core/storage/index.ts';
import { runCli, tempHome, CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';

const KEY_RE = /^sk-gw-[A-Za-z0-9]{32,}$/;

let home: string;
let cleanup: () => void;
beforeAll(() => {
  ({ home, cleanup } = tempHome());
});
afterAll(() => cleanup?.());

const cli = (...args: string[]) => runCli(args, { home });

interface KeyJson {
  name: string;
  prefix: string;
  state: string;
  budget_usd: number | null;
  budget_period: string | null;
  rpm: number | null;
  tpm: number | null;
  models: string[] | null;
}

async function listJson(): Promise<KeyJson[]> {
  const r = await cli('keys', 'list', '--json');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as KeyJson[];
}

function stateOfSecret(secret: string): string | null {
  const store = Store.open(home);
  try {
    return store.keys.findByHash(hashLocalKey(secret))?.state ?? null;
  } finally {
    store.close();
  }
}

describe('gateway keys', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let secret: string;

  it('create --name prints only the key on stdout, notes on stderr', async () => {
    const r = await cli('keys', 'create', '--name', 'X');
    expect(r.code).toBe(0);
    expect(r.stdout.endsWith('\n')).toBe(true);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(KEY_RE);
    expect(r.stderr).toContain('X');
    secret = lines[0];
    expect(stateOfSecret(secret)).toBe('active');
  });

  it('create with limits, then list --json shows them (and never a secret)', async () => {
    const r = await cli('keys', 'create', '--name', 'limited', '--budget', '2.5', '--period', 'monthly', '--rpm', '60', '--tpm', '1000', '--models', 'gpt-4o,gpt-4o-mini');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(KEY_RE);
    const list = await listJson();
    expect(list.map((k) => k.name)).toEqual(['X', 'limited']);
    expect(list[1]).toMatchObject({ state: 'active', budget_usd: 2.5, budget_period: 'monthly', rpm: 60, tpm: 1000, models: ['gpt-4o', 'gpt-4o-mini'] });
    expect(list[0]).toMatchObject({ state: 'active', budget_usd: null, rpm: null, models: null });
    expect(secret.startsWith(list[0].prefix)).toBe(true);
    const raw = JSON.stringify(list);
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(r.stdout.trim());
  });

  it('disable and enable', async () => {
    const d = await cli('keys', 'disable', 'X');
    expect(d.code).toBe(0);
    expect(d.stdout).toBe('');
    expect(d.stderr).toContain('X');
    expect(stateOfSecret(secret)).toBe('disabled');
    const e = await cli('keys', 'enable', 'X');
    expect(e.code).toBe(0);
    expect(stateOfSecret(secret)).toBe('active');
  });

  it('rotate prints a new key alone; the old secret no longer matches', async () => {
    const r = await cli('keys', 'rotate', 'X');
    expect(r.code).toBe(0);
    const fresh = r.stdout.trim();
    expect(fresh).toMatch(KEY_RE);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(fresh).not.toBe(secret);
    expect(stateOfSecret(secret)).toBeNull();
    expect(stateOfSecret(fresh)).toBe('active');
    secret = fresh;
  });

  it('delete hides the key from list, and frees the name', async () => {
    const d = await cli('keys', 'delete', 'X');
    expect(d.code).toBe(0);
    expect((await listJson()).map((k) => k.name)).toEqual(['limited']);
    // Kept for the audit trail, marked deleted.
    expect(stateOfSecret(secret)).toBe('deleted');
    const again = await cli('keys', 'create', '--name', 'X');
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toMatch(KEY_RE);
    expect(stateOfSecret(again.stdout.trim())).toBe('active');
  });
});
