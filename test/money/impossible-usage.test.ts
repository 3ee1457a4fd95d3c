/**
 * Usage no provider can truthfully report never poisons a key: a negative count is replaced by the gateway's
 * own estimate (clamped to 0 it made the call free), and output far beyond what the call allowed (its
 * `max_tokens` per choice, with room for a thinking budget) is clamped, the row marked estimated. Both on
 * chat's JSON answer and its stream, against a fake OpenAI upstream told to report such counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { auditRow } from '../support/call-checks.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let up: FakeUpstream;
let t: TestGateway;
beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  t = await startTestGateway({
    providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: 'sk-impossible-usage-0123456789', models: ['gpt-4o-mini'] }],
    keys: [{ name: 'tool', budgetUsd: 1 }],
  });
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

async function call(stream: boolean) {
  const client = t.client();
  const messages = [{ role: 'user' as const, content: 'count to three' }];
  if (!stream) {
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 10, messages }).withResponse();
    return auditRow(t, response.headers.get('x-request-id'));
  }
  const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 10, messages, stream: true, stream_options: { include_usage: true } }).withResponse();
  for await (const _ of data) void _;
  return auditRow(t, response.headers.get('x-request-id'));
}

describe('impossible usage from an upstream', () => {
  it.each([false, true])('500 million output tokens for max_tokens 10 are clamped, not charged (stream: %s)', async (stream) => {
    up.options.reasoningTokens = 500_000_000;
    try {
      const row = await call(stream);
      expect(row.pricing).toBe('estimated');
      expect(row.outputTokens).toBeLessThanOrEqual(10 + 32_768);
      // gpt-4o-mini's output is $0.60 per million: the bound costs cents, the report $300.
      expect(row.costUsd).toBeLessThan(0.05);
    } finally {
      up.options.reasoningTokens = 0;
    }
  });

  it.each([false, true])('a negative count is replaced by the gateway estimate, never free (stream: %s)', async (stream) => {
    up.options.reasoningTokens = -1_000;
    try {
      const row = await call(stream);
      expect(row.pricing).toBe('estimated');
      expect(row.inputTokens).toBeGreaterThan(0);
      expect(row.outputTokens).toBeGreaterThan(0);
      expect(row.costUsd).toBeGreaterThan(0);
    } finally {
      up.options.reasoningTokens = 0;
    }
  });

  it('leaves the key able to call on', async () => {
    t.flush();
    await expect(t.client().chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'still here?' }] })).resolves.toBeTruthy();
  });
});
