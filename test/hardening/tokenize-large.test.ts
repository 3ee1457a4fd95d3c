/**
 * A 45 MB prompt is tokenised exactly, on the tokenizer worker, while another client's calls keep being
 * answered: the test counts the small calls answered between the worker's start and end for that
 * prompt (an order of events, not a timing bound). The upstream reports no usage, so the audit row's
 * prompt tokens are the gateway's own count, and must equal gpt-tokenizer's.
 */
import { encode } from 'gpt-tokenizer';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOKENIZED_CHARS } from '../../core/gateway/estimate.ts';
import { tokenizerEvents } from '../../core/gateway/tokenizer-pool.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.ts';

let up: FakeUpstream;
let t: TestGateway;
beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'], omitUsage: true });
  t = await startTestGateway({
    providers: [{ name: 'openai', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-upstream' }],
    // The big key has a budget, so admission needs the prompt's count before it forwards anything.
    keys: [{ name: 'big', budgetUsd: 100, budgetPeriod: 'monthly' }, { name: 'small' }],
  });
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

describe('tokenising a 45 MB prompt', () => {
  it('counts it exactly off the request thread while other calls are answered', { timeout: 120_000 }, async () => {
    // Several words, punctuation and newlines, so the tokenizer has real merges to do (not one repeated token).
    const words = ['alpha', 'beta', 'gamma', 'delta,', 'epsilon.', 'zeta', 'eta\n', 'theta', 'iota', 'kappa'];
    const parts: string[] = [];
    let length = 0;
    for (let i = 0; length < 45 * 1024 * 1024; i++) {
      const w = `${words[i % words.length]} `;
      parts.push(w);
      length += w.length;
    }
    const prompt = parts.join('');
    expect(prompt.length).toBeGreaterThan(MAX_TOKENIZED_CHARS);

    let tokenizing = false;
    let sawStart = false;
    let answeredDuring = 0;
    const onStart = (e: { chars: number }) => {
      if (e.chars >= prompt.length) {
        tokenizing = true;
        sawStart = true;
      }
    };
    const onEnd = (e: { chars: number; tokens: number | null }) => {
      if (e.chars >= prompt.length) tokenizing = false;
    };
    tokenizerEvents.on('start', onStart);
    tokenizerEvents.on('end', onEnd);

    const small = t.client({ apiKey: t.keys.small, timeout: 110_000 });
    let done = false;
    const smallCalls = (async () => {
      let n = 0;
      while (!done) {
        const r = await small.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `ping ${n++}` }] });
        expect(r.choices[0]?.message.content).toBeTruthy();
        if (tokenizing) answeredDuring++;
      }
      return n;
    })();

    const big = await request(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.big}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: prompt }] }),
      headersTimeout: 110_000,
      bodyTimeout: 110_000,
    });
    const bigBody = (await big.body.json()) as { id?: string; usage?: { prompt_tokens: number; estimated?: boolean }; error?: unknown };
    done = true;
    const smallTotal = await smallCalls;
    tokenizerEvents.off('start', onStart);
    tokenizerEvents.off('end', onEnd);

    console.log(`[45 MB prompt] small calls answered: ${smallTotal}, of which while it was tokenised: ${answeredDuring}`);
    expect(big.statusCode, JSON.stringify(bigBody).slice(0, 300)).toBe(200);
    expect(sawStart).toBe(true);
    expect(smallTotal).toBeGreaterThan(0);
    // The other client was answered while the big prompt was being tokenised.
    expect(answeredDuring).toBeGreaterThan(0);
    // chat format: 3 tokens per message and 3 for the reply's priming.
    const exact = encode(`${prompt}\n`).length + 3 + 3;
    expect(bigBody.usage?.estimated).toBe(true);
    expect(bigBody.usage?.prompt_tokens).toBe(exact);
    // Not the length estimate a synchronous count would have fallen back to.
    expect(exact).not.toBe(Math.ceil((prompt.length + 1) / 4) + 6);
  });
});

describe('a large prompt for a key without a budget', () => {
  it('is forwarded without waiting for the count, and its estimated usage is still exact', { timeout: 60_000 }, async () => {
    const prompt = Array.from({ length: 120_000 }, (_, i) => `token${i % 977} `).join('');
    expect(prompt.length).toBeGreaterThan(MAX_TOKENIZED_CHARS);
    const r = await t.client({ apiKey: t.keys.small }).chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: prompt }] });
    expect((r.usage as { estimated?: boolean } | undefined)?.estimated).toBe(true);
    expect(r.usage?.prompt_tokens).toBe(encode(`${prompt}\n`).length + 6);
  });
});
