/**
 * Transparent billing: `usage.cost` and `x-gateway-cost-usd` (a plain decimal, never exponent
 * notation) against hand-computed prices, for the bundled price of gpt-4o-mini and for user prices set
 * through a second Store while the gateway runs; cached and reasoning tokens; estimated and unpriced
 * calls; and the audit row of each (cost, pricing, price version, tokens).
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import type { StoredCall } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;

let up: FakeUpstream; // plain counts
let upCached: FakeUpstream; // 4 cached prompt tokens, 2 reasoning tokens
let upNoUsage: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  [up, upCached, upNoUsage] = await Promise.all([
    startOpenAIUpstream({ models: ['gpt-4o-mini', 'custom-model', 'tiny-model', 'mystery-model'] }),
    startOpenAIUpstream({ models: ['cached-model'], cachedTokens: 4, reasoningTokens: 2 }),
    startOpenAIUpstream({ models: ['gpt-4o-mini'], omitUsage: true }),
  ]);
  t = await startTestGateway({
    providers: [
      { name: 'oa', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-cost-upstream-0123456789abcdef' },
      { name: 'compat', type: 'openai-compatible', baseUrl: up.url, models: ['custom-model', 'tiny-model', 'mystery-model'] },
      { name: 'cachy', type: 'openai-compatible', baseUrl: upCached.url, models: ['cached-model'] },
      { name: 'mute', type: 'openai', baseUrl: upNoUsage.url, models: ['gpt-4o-mini'], priority: 500, secret: 'sk-cost-mute-0123456789abcdef' },
    ],
  });
  // User prices, set the way `gateway prices set` does it: another connection, then a live reload.
  const cli = t.openStore();
  try {
    cli.prices.set('custom-model', { inputPerMtok: 3, outputPerMtok: 15 });
    cli.prices.set('tiny-model', { inputPerMtok: 0.01, outputPerMtok: 0.02 });
    cli.prices.set('cached-model', { inputPerMtok: 3, outputPerMtok: 15, cacheReadPerMtok: 0.3 });
  } finally {
    cli.close();
  }
  const until = Date.now() + 10_000;
  while (!t.gw.deps.prices.lookup('openai-compatible', null, 'cached-model')) {
    if (Date.now() > until) throw new Error('user prices never reached the running gateway');
    await new Promise((r) => setTimeout(r, 20));
  }
});
afterAll(async () => {
  await t?.close();
  await Promise.all([up, upCached, upNoUsage].map((u) => u?.close()));
});

function audit(id: string): StoredCall {
  t.flush();
  const store = t.openStore();
  try {
    const row = getCall(store.db, id);
    if (!row) throw new Error(`no audit row ${id}`);
    return row;
  } finally {
    store.close();
  }
}

async function nonStream(model: string, content: string) {
  const { data, response } = await t.client().chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();
  const usage = data.usage as unknown as Record<string, number>;
  return { data, usage, headers: response.headers, id: response.headers.get('x-request-id')! };
}

describe('non-stream cost', () => {
  it('gpt-4o-mini at its bundled price ($0.15 in, $0.60 out per MTok)', async () => {
    // "price me now": prompt 3 words + 3 = 6, completion "Echo: price me now" = 4.
    const expected = (6 * 0.15 + 4 * 0.6) / 1e6;
    const r = await nonStream('gpt-4o-mini', 'price me now');
    expect(r.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4 });
    expect(r.usage.cost).toBeCloseTo(expected, 15);
    const header = r.headers.get('x-gateway-cost-usd')!;
    expect(header).toMatch(PLAIN_DECIMAL);
    expect(Number(header)).toBeCloseTo(expected, 15);
    expect(header).toBe('0.0000033');
    expect(r.headers.get('x-gateway-provider')).toBe('oa');

    const row = audit(r.id);
    expect(row).toMatchObject({ status: 200, pricing: 'priced', inputTokens: 6, outputTokens: 4, provider: 'oa', model: 'gpt-4o-mini', attempts: 1, errorType: null });
    expect(row.costUsd).toBeCloseTo(expected, 15);
    expect(row.priceVersion).toBeTruthy();
  });

  it('a user price set while running', async () => {
    const expected = (6 * 3 + 4 * 15) / 1e6; // 0.000078
    const r = await nonStream('custom-model', 'price me now');
    expect(r.usage.cost).toBeCloseTo(expected, 15);
    expect(r.headers.get('x-gateway-cost-usd')).toBe('0.000078');
    expect(audit(r.id).costUsd).toBeCloseTo(expected, 15);
  });

  it('a cost below 1e-6 is still a plain decimal (String() would give 1.4e-7)', async () => {
    const expected = (6 * 0.01 + 4 * 0.02) / 1e6; // 1.4e-7
    expect(String(expected)).toMatch(/e-/);
    const r = await nonStream('tiny-model', 'price me now');
    const header = r.headers.get('x-gateway-cost-usd')!;
    expect(header).toMatch(PLAIN_DECIMAL);
    expect(header).not.toMatch(/e/i);
    expect(header).toBe('0.00000014');
    expect(r.usage.cost).toBeCloseTo(expected, 15);
  });

  it('cached tokens at the cache-read price, reasoning inside output', async () => {
    // prompt = 6 + 4 cached = 10; completion = 4 + 2 reasoning = 6
    const expected = ((10 - 4) * 3 + 4 * 0.3 + 6 * 15) / 1e6; // 0.0001092
    const r = await nonStream('cached-model', 'price me now');
    expect(r.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 6 });
    expect(r.usage.cost).toBeCloseTo(expected, 15);
    expect(r.headers.get('x-gateway-cost-usd')).toBe('0.0001092');
    const row = audit(r.id);
    expect(row).toMatchObject({ inputTokens: 10, outputTokens: 6, cachedTokens: 4, reasoningTokens: 2, pricing: 'priced' });
    expect(row.costUsd).toBeCloseTo(expected, 15);
  });

  it('an unpriced model: no cost header, no usage.cost, pricing unpriced', async () => {
    const r = await nonStream('mystery-model', 'price me now');
    expect(r.headers.get('x-gateway-cost-usd')).toBeNull();
    expect(r.usage).not.toHaveProperty('cost');
    const row = audit(r.id);
    expect(row).toMatchObject({ status: 200, pricing: 'unpriced', costUsd: null, inputTokens: 6, outputTokens: 4 });
  });

  it('an upstream without usage: estimated usage, priced from the estimate, pricing estimated', async () => {
    const { data, response } = await t.client().chat.completions.create({ model: 'mute/gpt-4o-mini', messages: [{ role: 'user', content: 'count these tokens for me' }] }).withResponse();
    expect(response.headers.get('x-gateway-provider')).toBe('mute');
    const usage = data.usage as unknown as Record<string, number>;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    const expected = (usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.6) / 1e6;
    expect(usage.cost).toBeCloseTo(expected, 15);
    expect(response.headers.get('x-gateway-cost-usd')).toMatch(PLAIN_DECIMAL);
    const row = audit(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ pricing: 'estimated', inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, provider: 'mute' });
    expect(row.costUsd).toBeCloseTo(expected, 15);
  });
});

describe('stream cost', () => {
  it('the usage chunk carries usage.cost and the audit row the same cost', async () => {
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'cached-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'price me now' }] })
      .withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of data) chunks.push(c);
    const usage = chunks.at(-1)!.usage as unknown as Record<string, number>;
    const expected = ((10 - 4) * 3 + 4 * 0.3 + 6 * 15) / 1e6;
    expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 6 });
    expect(usage.cost).toBeCloseTo(expected, 15);
    const row = audit(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ stream: true, pricing: 'priced', inputTokens: 10, outputTokens: 6, cachedTokens: 4 });
    expect(row.costUsd).toBeCloseTo(expected, 15);
  });
});
