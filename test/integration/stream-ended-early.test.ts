/**
 * An OpenAI-protocol stream that ends cleanly (the HTTP body complete, no reset) before any choice finished,
 * without `[DONE]` or usage: the provider's handler gave up mid-answer. Every front end reports it as the
 * failure it is (chat: `data: {"error"}` and no `[DONE]`; Messages: `event: error`; Responses:
 * `response.failed`) and the row says 502, billed for what was relayed. Before, the gateway finished such a
 * stream as if whole, and the SDKs handed the truncated text over as the complete answer. A stream that did
 * finish and only missed `[DONE]` (some OpenAI-compatible servers) stays a success.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import type { StoredCall } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let up: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  t = await startTestGateway({
    providers: [{ name: 'oa', type: 'openai-compatible', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-ended-early-0123456789' }],
    // One provider and no retry of a failed stream: the fault is the client's to see.
    settings: { routing: { strategy: 'priority', maxAttempts: 1, breakerFailures: 1000, breakerCooldownMs: 1000 } },
  });
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

async function auditRow(id: string): Promise<StoredCall> {
  const store = t.openStore();
  try {
    for (let i = 0; i < 250; i++) {
      t.flush();
      const row = getCall(store.db, id);
      if (row) return row;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no audit row for ${id}`);
  } finally {
    store.close();
  }
}

const PROMPT = 'one two three four five six seven';

async function rawChat(): Promise<{ id: string; text: string }> {
  const res = await fetch(`${t.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: PROMPT }] }),
  });
  expect(res.status).toBe(200);
  return { id: res.headers.get('x-request-id') ?? '', text: await res.text() };
}

describe('an OpenAI stream that ends before a finish_reason', () => {
  it('chat (relayed as sent): ends with an error event, no [DONE]; the row is a 502 that pays for the text relayed', async () => {
    up.queueFault({ kind: 'end-after-chunks', chunks: 3 });
    const { id, text } = await rawChat();
    expect(text).not.toContain('[DONE]');
    const blocks = text.split('\n\n').filter((b) => b !== '');
    const last = JSON.parse(blocks.at(-1)!.slice('data: '.length)) as { error: Record<string, unknown> };
    expect(last.error).toMatchObject({ type: 'api_error', param: null });
    expect(String(last.error.message)).toMatch(/ended early/);
    const row = await auditRow(id);
    expect(row.status).toBe(502);
    expect(row.provider).toBe('oa');
    expect(row.outputTokens).toBeGreaterThan(0);
    expect(row.pricing).toBe('estimated');
  });

  it('chat: a stream that finished and only left out [DONE] is whole', async () => {
    up.queueFault({ kind: 'end-after-chunks', chunks: -1 });
    const { id, text } = await rawChat();
    expect(text).toContain('data: [DONE]');
    expect(text).not.toContain('"error"');
    expect((await auditRow(id)).status).toBe(200);
  });

  it('Messages (translated from chat): the Anthropic SDK raises, and the row is a 502', async () => {
    up.queueFault({ kind: 'end-after-chunks', chunks: 3 });
    const client = new Anthropic({ apiKey: t.key, baseURL: t.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    const stream = client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] });
    await expect(stream.finalMessage()).rejects.toThrow(/ended early/);
    const id = (await stream.withResponse()).response.headers.get('x-request-id') ?? '';
    expect((await auditRow(id)).status).toBe(502);
  });

  it('Responses (translated from chat): the stream ends with response.failed, which the SDK reports', async () => {
    up.queueFault({ kind: 'end-after-chunks', chunks: 3 });
    const stream = t.client().responses.stream({ model: 'gpt-4o-mini', input: PROMPT });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types.at(-1)).toBe('response.failed');
    expect(types).not.toContain('response.completed');
  });
});
