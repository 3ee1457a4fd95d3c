/**
 * Key changes made through a second Store on the same SQLite file (as the CLI does) take effect on a
 * running gateway within a second: create, disable, enable, rotate, delete, and re-using a deleted
 * key's name.
 */
import { AuthenticationError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCalls } from '../../core/storage/audit-queries.ts';
import type { Store } from '../../core/storage/index.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

const WITHIN_MS = 1_000;

let up: FakeUpstream;
let t: TestGateway;
let cli: Store;

beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  t = await startTestGateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: 'sk-keys-live-upstream-0123456789', models: ['gpt-4o-mini'] }] });
  cli = t.openStore();
});
afterAll(async () => {
  cli?.close();
  await t?.close();
  await up?.close();
});

type Outcome = 'ok' | 401 | string;

/** One authenticated request that needs no upstream (cheap, so probes measure the key, not the load). */
async function probe(secret: string): Promise<Outcome> {
  try {
    const res = await fetch(`${t.baseUrl}/models`, { headers: { authorization: `Bearer ${secret}` } });
    if (res.status === 200) return 'ok';
    const body = (await res.json()) as { error?: { code?: string } };
    if (res.status === 401) {
      expect(body.error?.code).toBe('invalid_api_key');
      return 401;
    }
    return `status ${res.status}`;
  } catch (err) {
    return String(err);
  }
}

/** A full chat through the SDK with this key: the proof that it really works (or really does not). */
async function tryKey(secret: string): Promise<Outcome> {
  try {
    await t.client({ apiKey: secret }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
    return 'ok';
  } catch (err) {
    if (err instanceof AuthenticationError) {
      expect(err.code).toBe('invalid_api_key');
      return 401;
    }
    return String(err);
  }
}

/**
 * Probes the key every 50 ms (without waiting for earlier probes, so a slow machine does not stretch
 * the cadence) until one gives `want`; returns how long after `changedAt` the first such probe was
 * sent, which must be within a second. Then checks the outcome with a real chat call.
 */
async function becomes(secret: string, want: Outcome, changedAt: number): Promise<number> {
  const probes: Array<Promise<{ sentAt: number; outcome: Outcome }>> = [];
  let hit: number | null = null;
  const giveUp = changedAt + 10_000;
  while (hit === null && Date.now() < giveUp) {
    const sentAt = Date.now();
    probes.push(
      probe(secret).then((outcome) => {
        if (outcome === want && (hit === null || sentAt < hit)) hit = sentAt;
        return { sentAt, outcome };
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
  }
  const results = await Promise.all(probes);
  const firstGood = results.filter((r) => r.outcome === want).map((r) => r.sentAt);
  if (firstGood.length === 0) throw new Error(`key never became ${want}; last: ${results.at(-1)?.outcome}`);
  const ms = Math.min(...firstGood) - changedAt;
  expect(ms, `key became ${want} ${ms} ms after the change`).toBeLessThanOrEqual(WITHIN_MS);
  expect(await tryKey(secret)).toBe(want);
  return ms;
}

describe('live key changes', () => {
  it('a key created by another connection works within a second', async () => {
    const changedAt = Date.now();
    const { secret } = cli.keys.create({ name: 'fresh' });
    expect(secret).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
    const ms = await becomes(secret, 'ok', changedAt);
    expect(ms).toBeLessThanOrEqual(WITHIN_MS);
  });

  it('disabling makes it 401 within a second; enabling brings it back', async () => {
    const { secret } = cli.keys.create({ name: 'toggled' });
    await becomes(secret, 'ok', Date.now());
    let changedAt = Date.now();
    cli.keys.setState('toggled', 'disabled');
    await becomes(secret, 401, changedAt);
    let message = '';
    try {
      await t.client({ apiKey: secret }).models.list();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('disabled');
    // The refused call is logged under the key that made it, so `gateway logs --key toggled` finds it.
    expect(await tryKey(secret)).toBe(401);
    t.flush();
    expect(listCalls(cli.db, { limit: 100, keyName: 'toggled' }).some((c) => c.status === 401)).toBe(true);
    changedAt = Date.now();
    cli.keys.setState('toggled', 'active');
    await becomes(secret, 'ok', changedAt);
  });

  it('rotate invalidates the old secret and the new one works', async () => {
    const { secret: old } = cli.keys.create({ name: 'rotated', rpm: 1000 });
    await becomes(old, 'ok', Date.now());
    const changedAt = Date.now();
    const { secret: fresh, key } = cli.keys.rotate('rotated');
    expect(fresh).not.toBe(old);
    expect(key.rpm).toBe(1000);
    await becomes(old, 401, changedAt);
    await becomes(fresh, 'ok', changedAt);
    // Same key (name, id) before and after: the history stays with it.
    t.flush();
    const calls = listCalls(cli.db, { limit: 100, keyName: 'rotated' });
    expect(new Set(calls.filter((c) => c.status === 200).map((c) => c.keyId)).size).toBe(1);
  });

  it('a deleted key is 401 and its name can be reused by a new key', async () => {
    const { secret: first } = cli.keys.create({ name: 'reused' });
    await becomes(first, 'ok', Date.now());
    let changedAt = Date.now();
    cli.keys.delete('reused');
    await becomes(first, 401, changedAt);
    let message = '';
    try {
      await t.client({ apiKey: first }).models.list();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('deleted');

    changedAt = Date.now();
    const { secret: second, key } = cli.keys.create({ name: 'reused' });
    expect(key.state).toBe('active');
    await becomes(second, 'ok', changedAt);
    expect(await tryKey(first)).toBe(401);
    expect(cli.keys.list({ includeDeleted: true }).filter((k) => k.name === 'reused').map((k) => k.state).sort()).toEqual(['active', 'deleted']);
  });

  it('the key that started with the gateway keeps working throughout', async () => {
    expect(await tryKey(t.key)).toBe('ok');
  });
});
