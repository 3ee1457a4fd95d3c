/**
 * A replayed call contacts no provider and costs nothing (its row has cost 0, marked replayed, its header
 * the recorded cost), so a key's budget neither refuses nor counts it; what still holds is the key's
 * requests-per-minute limit (429) and its model allow-list (403). A graceful stop waits for a replay in
 * flight (and its row is written before the store closes), or cuts it at the end of its grace. Driven by
 * the official `openai` SDK and plain fetch.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spendForKey } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { apiError, auditRow } from '../support/call-checks.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import type { NewKey } from '../../core/storage/keys-repo.ts';
import { tempDir } from './rig.ts';
import { dbOf } from '../support/sqlite-db.ts';

const SECRET = 'sk-replay-admission-upstream-0123456789';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'tell me about admission' }], max_tokens: 20 };
// No max_tokens: the fake answers LONG words, one chunk each: a stream of a few MB that fills the socket.
const LONG = { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a very long story please' }] };
const LONG_WORDS = 30_000;

function gateway(up: FakeUpstream, mode: 'record' | 'replay', dir: string, keys?: NewKey[]): Promise<TestGateway> {
  return startTestGateway({
    keys,
    settings: { cassettes: { mode, dir } },
    providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: SECRET, models: ['gpt-4o-mini', 'text-embedding-3-small'] }],
  });
}

/** Starts a streamed replay and resolves with its response once the headers are in, the body unread. */
async function openLong(t: TestGateway): Promise<Response> {
  const res = await fetch(`${t.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(LONG),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('x-gateway-replayed')).toBe('true');
  return res;
}

/** The call's rows, read through a connection of its own (as the CLI does), after the gateway stopped. */
function rowsOf(t: TestGateway, id: string): Array<{ status: number; replayed: number; cost_usd: number | null; error_message: string | null }> {
  const store = t.openStore();
  try {
    return store.db.prepare('SELECT status, replayed, cost_usd, error_message FROM calls WHERE id = ?').all(id) as never;
  } finally {
    store.close();
  }
}

const cassette = tempDir('gw-replay-admission-');
let recordedCost = 0;

beforeAll(async () => {
  const up = await startOpenAIUpstream({ models: ['gpt-4o-mini', 'text-embedding-3-small'], longAnswers: LONG_WORDS });
  const recorder = await gateway(up, 'record', cassette.dir);
  const { response } = await recorder.client().chat.completions.create(CHAT).withResponse();
  recordedCost = Number(response.headers.get('x-gateway-cost-usd'));
  await recorder.client().embeddings.create({ model: 'text-embedding-3-small', input: ['one'] });
  const long = await fetch(`${recorder.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${recorder.key}`, 'content-type': 'application/json' }, body: JSON.stringify(LONG) });
  expect((await long.text()).length).toBeGreaterThan(3_000_000);
  await recorder.close();
  await up.close();
}, 120_000);
afterAll(() => cassette.cleanup());

describe('admission of a replay', () => {
  let watch: FakeUpstream;
  let t: TestGateway;
  beforeAll(async () => {
    watch = await startOpenAIUpstream({ models: ['gpt-4o-mini', 'text-embedding-3-small'] });
    t = await gateway(watch, 'replay', cassette.dir, [
      { name: 'ci', budgetUsd: 1 },
      { name: 'spent', budgetUsd: 0.000_000_1 },
      { name: 'limited', rpm: 1 },
      { name: 'embed-only', models: ['text-embedding-3-small'] },
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await watch?.close();
  });

  it('the cassette holds the recorded cost', () => {
    expect(recordedCost).toBeGreaterThan(0.000_000_1);
    const files = readdirSync(cassette.dir).filter((f) => f.startsWith('v1.chat.completions--'));
    expect(files.map((f) => readFileSync(path.join(cassette.dir, f), 'utf8')).join('')).toContain('"cost_usd"');
  });

  it('is free: cost 0 on its row, marked replayed, the recorded cost in its header, nothing spent', async () => {
    const keyId = (await t.gw.deps.store.keys.list()).find((k) => k.name === 'ci')!.id;
    const before = spendForKey(dbOf(t.gw), keyId);
    const { response } = await t.client().chat.completions.create(CHAT).withResponse();
    expect(response.headers.get('x-gateway-replayed')).toBe('true');
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeCloseTo(recordedCost, 12);
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ replayed: true, status: 200, pricing: 'priced', keyName: 'ci', costUsd: 0 });
    expect(spendForKey(dbOf(t.gw), keyId)).toBe(before);
    expect(watch.requests).toHaveLength(0);
  });

  it('a key whose budget is smaller than the recorded cost still replays, again and again', async () => {
    const c = t.client({ apiKey: t.keys.spent });
    for (let i = 0; i < 3; i++) {
      const { response } = await c.chat.completions.create(CHAT).withResponse();
      expect(response.headers.get('x-gateway-replayed')).toBe('true');
    }
    expect(watch.requests).toHaveLength(0);
  });

  it('a key over its rate limit gets 429 with retry-after', async () => {
    const c = t.client({ apiKey: t.keys.limited });
    await c.chat.completions.create(CHAT);
    const err = await apiError(c.chat.completions.create(CHAT));
    expect(err.status).toBe(429);
    expect(Number(err.headers?.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a model off the key allow-list gets 403; an allowed one replays', async () => {
    const err = await apiError(t.client({ apiKey: t.keys['embed-only'] }).chat.completions.create(CHAT));
    expect(err.status).toBe(403);
    expect(err.code).toBe('model_not_allowed');
    const ok = await t.client({ apiKey: t.keys['embed-only'] }).embeddings.create({ model: 'text-embedding-3-small', input: ['one'] });
    expect(ok.data).toHaveLength(1);
  });
});

describe('a graceful stop and a replay in flight', () => {
  let watch: FakeUpstream;
  beforeAll(async () => {
    watch = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  });
  afterAll(async () => {
    await watch?.close();
  });

  it('waits for it: the stop resolves only after the stream is read to its end, and its row is written', async () => {
    const t = await gateway(watch, 'replay', cassette.dir);
    try {
      const res = await openLong(t);
      const id = res.headers.get('x-request-id')!;
      let stopped = false;
      const stopping = t.gw.close({ graceMs: 30_000 }).then(() => (stopped = true));
      await new Promise((r) => setTimeout(r, 300));
      // The client has not read its stream: the replay is in flight and holds the stop.
      expect(stopped).toBe(false);
      const text = await res.text();
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      await stopping;
      expect(rowsOf(t, id)).toEqual([{ status: 200, replayed: 1, cost_usd: 0, error_message: null }]);
    } finally {
      await t.close();
    }
  });

  it('cuts it at the end of the grace period: the stream ends early and its row says so (503, replayed)', async () => {
    const t = await gateway(watch, 'replay', cassette.dir);
    try {
      const res = await openLong(t);
      const id = res.headers.get('x-request-id')!;
      await t.gw.close({ graceMs: 200 });
      const text = await res.text().catch(() => '');
      expect(text.endsWith('data: [DONE]\n\n')).toBe(false);
      const rows = rowsOf(t, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: 503, replayed: 1 });
      expect(rows[0].error_message).toContain('shutting down');
    } finally {
      await t.close();
    }
  });
});
