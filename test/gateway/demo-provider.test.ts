/**
 * The demo provider behaves like the provider it stands in for: it stops at `max_tokens` (or
 * `max_completion_tokens`) with `finish_reason: "length"`, generates and bills `n` choices, in both the
 * JSON answer and the stream, checked with the official OpenAI SDK. Then, through the gateway, a key's
 * budget offered for trying budgets offline holds when the client follows the 402's own advice.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoUpstream } from '../../core/demo/demo-upstream.ts';
import type { DemoUpstream } from '../../core/demo/demo-upstream.ts';
import { countTokens } from '../../core/gateway/estimate.ts';
import { startTestGateway } from '../support/gateway-harness.ts';

const LONG_PROMPT = 'Explain, step by step and with care, how a careful gateway keeps a budget from being overspent.';

describe('the demo upstream, as the OpenAI SDK sees it', () => {
  let demo: DemoUpstream;
  let client: OpenAI;
  beforeAll(async () => {
    demo = await startDemoUpstream(0);
    client = new OpenAI({ apiKey: 'unused', baseURL: demo.baseUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await demo?.close();
  });

  it('answers in full with finish_reason stop when nothing caps it', async () => {
    const r = await client.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices).toHaveLength(1);
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.choices[0].message.content).toBe('Demo reply to: hi');
    expect(r.usage?.completion_tokens).toBe(countTokens('Demo reply to: hi'));
  });

  it('stops at max_tokens and at max_completion_tokens, reporting what it produced', async () => {
    for (const cap of [1, 3, 7]) {
      for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
        const r = await client.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: LONG_PROMPT }], [field]: cap });
        const text = r.choices[0].message.content ?? '';
        expect(r.choices[0].finish_reason).toBe('length');
        expect(r.usage?.completion_tokens).toBeLessThanOrEqual(cap);
        expect(r.usage?.completion_tokens).toBe(countTokens(text));
        expect(text.length).toBeGreaterThan(0);
        expect(`Demo reply to: ${LONG_PROMPT}`.startsWith(text)).toBe(true);
      }
    }
  });

  it('generates n choices and bills each', async () => {
    const r = await client.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: LONG_PROMPT }], n: 3, max_tokens: 4 });
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    for (const c of r.choices) expect(c.finish_reason).toBe('length');
    expect(r.usage?.completion_tokens).toBe(3 * countTokens(r.choices[0].message.content ?? ''));
    expect(r.usage?.completion_tokens).toBeLessThanOrEqual(12);
  });

  it('streams n interleaved choices, each cut at max_tokens, with usage when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'demo-chat',
      messages: [{ role: 'user', content: LONG_PROMPT }],
      n: 2,
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = ['', ''];
    const finish: Array<string | null> = [null, null];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text[c.index] += c.delta.content ?? '';
        if (c.finish_reason) finish[c.index] = c.finish_reason;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(finish).toEqual(['length', 'length']);
    expect(text[0]).toBe(text[1]);
    expect(countTokens(text[0])).toBeLessThanOrEqual(5);
    expect(usage?.completion_tokens).toBe(2 * countTokens(text[0]));
  });
});

describe('a budget tried on the demo provider', () => {
  it('is never overspent by a client that follows the 402 advice', async () => {
    const budgetUsd = 0.00005;
    const t = await startTestGateway({ demo: true, keys: [{ name: 'small', budgetUsd }] });
    try {
      const client = t.client();
      let maxTokens: number | undefined;
      let refusals = 0;
      for (let i = 0; i < 20 && refusals < 2; i++) {
        try {
          await client.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'Say something long about budgets.' }], ...(maxTokens ? { max_tokens: maxTokens } : {}) });
        } catch (err) {
          expect(err).toBeInstanceOf(OpenAI.APIError);
          expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
          const hint = /Set max_tokens to (\d+) or less/.exec((err as Error).message);
          refusals = hint ? 0 : refusals + 1;
          maxTokens = hint ? Number(hint[1]) : maxTokens;
        }
      }
      t.flush();
      const store = t.openStore();
      try {
        const spent = (store.db.prepare('SELECT COALESCE(SUM(cost_usd), 0) AS s, COUNT(*) AS n FROM calls WHERE status = 200').get() as { s: number; n: number });
        expect(spent.n).toBeGreaterThan(0);
        expect(spent.s).toBeLessThanOrEqual(budgetUsd);
      } finally {
        store.close();
      }
    } finally {
      await t.close();
    }
  });
});
