/**
 * Every pricing feature, with the usage objects each provider really sends, priced by hand from list
 * prices and compared to 1e-9 USD on every surface: the body's `usage.cost` (as a plain decimal in
 * the raw text), `x-gateway-cost-usd`, the stream's usage chunk, the audit row, `gateway usage --json`
 * and the balance endpoints. One key per case, so each surface holds exactly that case's cost.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../core/pricing/cost.ts';
import { runCli } from '../support/cli.ts';
import { auditRow } from '../support/call-checks.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway, TestProvider } from '../support/gateway-harness.ts';

type Obj = Record<string, unknown>;

interface Case {
  name: string;
  provider: Omit<TestProvider, 'name' | 'baseUrl'>;
  model: string;
  /** The upstream's whole answer (non-stream). */
  answer: Obj;
  /** The upstream's stream (SSE `data:` payloads; Anthropic's with their event names). */
  stream?: Array<{ event?: string; data: Obj | string }>;
  /** Endpoint, when not chat. */
  endpoint?: 'embeddings';
  /** USD, computed by hand from the list prices in the comment. */
  expected: number;
}

const oaChat = (usage: Obj, extra: Obj = {}): Obj => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop', logprobs: null }],
  usage, ...extra,
});
const oaStream = (usage: Obj): Array<{ data: Obj | string }> => [
  { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] } },
  { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
  { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage } },
  { data: '[DONE]' },
];
const anthropicUsage = { input_tokens: 100, cache_creation_input_tokens: 3000, cache_read_input_tokens: 500, output_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 } };
const geminiLong = { promptTokenCount: 250_000, candidatesTokenCount: 800, thoughtsTokenCount: 200, totalTokenCount: 251_000 };
const geminiAudio = {
  promptTokenCount: 1000, candidatesTokenCount: 100, totalTokenCount: 1100,
  promptTokensDetails: [{ modality: 'TEXT', tokenCount: 400 }, { modality: 'AUDIO', tokenCount: 600 }],
};
const geminiAnswer = (usageMetadata: Obj): Obj => ({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'x' });

const CASES: Case[] = [
  {
    // gpt-4o-mini $0.15 in, $0.075 cached, $0.60 out: 600×0.15 + 400×0.075 + 200×0.6 = 240 µ$
    name: 'openai cached tokens', provider: { type: 'openai' }, model: 'gpt-4o-mini',
    answer: oaChat({ prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, prompt_tokens_details: { cached_tokens: 400, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 } }),
    stream: oaStream({ prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, prompt_tokens_details: { cached_tokens: 400 } }),
    expected: 0.00024,
  },
  {
    // gpt-5.4 above 272k prompt tokens: $5 in, $22.50 out for the whole call: 300000×5 + 1000×22.5
    name: 'openai long-context tier', provider: { type: 'openai' }, model: 'gpt-5.4',
    answer: oaChat({ prompt_tokens: 300_000, completion_tokens: 1000, total_tokens: 301_000 }),
    expected: 1.5225,
  },
  {
    // service_tier priority: 2× gpt-4o-mini's standard rates: (100×0.15 + 100×0.6) × 2
    name: 'openai priority service tier', provider: { type: 'openai' }, model: 'gpt-4o-mini',
    answer: oaChat({ prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 }, { service_tier: 'priority' }),
    expected: 0.00015,
  },
  {
    // Azure gpt-4o $2.50 / $10: 1000×2.5 + 100×10
    name: 'azure', provider: { type: 'azure' }, model: 'gpt-4o',
    answer: oaChat({ prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 }),
    expected: 0.0035,
  },
  {
    // claude-sonnet-4-5: $3 in, $3.75 5-minute writes, $6 1-hour writes, $0.30 reads, $15 out:
    // 100×3 + 1000×3.75 + 2000×6 + 500×0.3 + 300×15 = 20700 µ$
    name: 'anthropic 5-minute and 1-hour cache writes', provider: { type: 'anthropic' }, model: 'claude-sonnet-4-5',
    answer: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: anthropicUsage },
    stream: [
      { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { ...anthropicUsage, output_tokens: 1 } } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 300 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ],
    expected: 0.0207,
  },
  {
    // gemini-2.5-pro above 200k: $2.50 in, $15 out (thoughts are output): 250000×2.5 + 1000×15
    name: 'gemini long-context tier', provider: { type: 'gemini' }, model: 'gemini-2.5-pro',
    answer: geminiAnswer(geminiLong),
    stream: [{ data: geminiAnswer(geminiLong) }],
    expected: 0.64,
  },
  {
    // gemini-2.5-flash: text $0.30, audio $1.00 in, $2.50 out: 400×0.3 + 600×1 + 100×2.5 = 970 µ$
    name: 'gemini audio input tokens', provider: { type: 'gemini' }, model: 'gemini-2.5-flash',
    answer: geminiAnswer(geminiAudio),
    expected: 0.00097,
  },
  {
    // OpenRouter's own figure wins over any price lookup
    name: 'openrouter usage.cost', provider: { type: 'openai-compatible', preset: 'openrouter' }, model: 'openai/gpt-4o-mini',
    answer: oaChat({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, cost: 0.00001234, is_byok: false }),
    stream: oaStream({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, cost: 0.00001234 }),
    expected: 0.00001234,
  },
  {
    // DeepSeek (single price since Sept 2025): $0.28 miss, $0.028 hit, $0.42 out: 400×0.28 + 600×0.028 + 100×0.42
    name: 'deepseek cache hit/miss fields', provider: { type: 'openai-compatible', preset: 'deepseek' }, model: 'deepseek-chat',
    answer: oaChat({ prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, prompt_cache_hit_tokens: 600, prompt_cache_miss_tokens: 400 }),
    expected: 0.0001708,
  },
  {
    // Groq llama-3.1-8b-instant $0.05 / $0.08: 100×0.05 + 20×0.08 = 6.6 µ$ (JSON.stringify would print 0.0000066)
    name: 'groq small amount', provider: { type: 'openai-compatible', preset: 'groq' }, model: 'llama-3.1-8b-instant',
    answer: oaChat({ prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }),
    expected: 0.0000066,
  },
  {
    // text-embedding-3-small $0.02: 1 token = 2e-8 USD, which JSON.stringify prints as 2e-8
    name: 'openai embeddings tiny amount', provider: { type: 'openai' }, model: 'text-embedding-3-small', endpoint: 'embeddings',
    answer: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'text-embedding-3-small', usage: { prompt_tokens: 1, total_tokens: 1 } },
    expected: 0.00000002,
  },
  {
    // an upstream reporting 1e308 tokens: clamped to 1e9 and flagged, never Infinity (gpt-4o-mini: 1e9×0.15 + 10×0.6)
    name: 'absurd usage is clamped', provider: { type: 'openai' }, model: 'gpt-4o-mini',
    answer: oaChat({ prompt_tokens: 1e308, completion_tokens: 10, total_tokens: 1e308 }),
    expected: 150.000006,
  },
];

let upstream: Server;
let upstreamUrl: string;
let current: Case = CASES[0];
let t: TestGateway;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const wantsStream = /stream/i.test(req.url ?? '') || /"stream":true/.test(body);
      if (wantsStream && current.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of current.stream) {
          // A provider that drops the connection mid-stream.
          if (e.data === '__drop__') return void setTimeout(() => res.destroy(), 50);
          res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`);
        }
        res.end();
        return;
      }
      const text = JSON.stringify(current.answer);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  t = await startTestGateway({
    providers: CASES.map((c, i) => ({
      ...c.provider,
      name: `p${i}`,
      baseUrl: c.provider.type === 'openai-compatible' || c.provider.type === 'openai' ? `${upstreamUrl}/v1` : upstreamUrl,
      secret: `sk-fake-upstream-${i}-0123456789`,
      models: [c.model],
      priority: i,
    })),
    // A budget per case, so the balance endpoints report exactly that case's spend.
    keys: CASES.map((_, i) => ({ name: `k${i}`, budgetUsd: 1000, budgetPeriod: 'total' as const })),
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await new Promise<void>((r) => upstream.close(() => r()));
});

const near = (a: unknown, b: number) => expect(Math.abs(Number(a) - b)).toBeLessThan(1e-9);

describe.each(CASES.map((c, i) => [c.name, c, i] as const))('%s', (_name, c, i) => {
  const key = () => t.keys[`k${i}`];
  const call = (stream: boolean) =>
    fetch(`${t.baseUrl}/${c.endpoint ?? 'chat/completions'}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json' },
      body: JSON.stringify(
        c.endpoint === 'embeddings'
          ? { model: `p${i}/${c.model}`, input: 'hi' }
          : { model: `p${i}/${c.model}`, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) },
      ),
    });

  it('body, header, audit row, usage --json and balances agree with the hand computation', async () => {
    current = c;
    const res = await call(false);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const plain = formatUsd(c.expected);
    // The raw body carries the plain decimal: no float noise, no exponent.
    expect(text).toContain(`"cost":${plain}`);
    expect(text).not.toMatch(/"cost":[^,}]*e/);
    near((JSON.parse(text) as { usage: { cost: number } }).usage.cost, c.expected);
    expect(res.headers.get('x-gateway-cost-usd')).toBe(plain);
    const row = await auditRow(t, res.headers.get('x-request-id'));
    near(row.costUsd, c.expected);
    expect(row.pricing).toBe(c.name.includes('absurd') ? 'estimated' : 'priced');

    const bal = await fetch(`${t.baseUrl}/balance`, { headers: { authorization: `Bearer ${key()}` } });
    const balText = await bal.text();
    expect(balText).not.toMatch(/\de-\d/);
    const balance = JSON.parse(balText) as { used: number; remain: number };
    near(balance.used, c.expected);
    near(balance.remain, 1000 - c.expected);
    const legacy = (await (await fetch(`${t.baseUrl}/dashboard/billing/usage`, { headers: { authorization: `Bearer ${key()}` } })).json()) as { total_usage: number };
    near(legacy.total_usage / 100, c.expected);
  });

  it.runIf(c.stream !== undefined)('the stream usage chunk carries the same cost', async () => {
    current = c;
    const res = await call(true);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const usageEvent = text.split('\n\n').find((e) => e.includes('"cost":'));
    expect(usageEvent, text).toBeDefined();
    expect(usageEvent).toContain(`"cost":${formatUsd(c.expected)}`);
    const row = await auditRow(t, res.headers.get('x-request-id'));
    near(row.costUsd, c.expected);
  });
});

describe('a stream cut mid-way', () => {
  it('an Anthropic stream is billed from message_start (100,020 prompt tokens), not from a text estimate', async () => {
    const i = CASES.findIndex((c) => c.provider.type === 'anthropic');
    current = {
      ...CASES[i],
      stream: [
        { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100_020, output_tokens: 1 } } } },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } } },
        { data: '__drop__' },
      ],
    };
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys[`k${i}`]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: `p${i}/claude-sonnet-4-5`, messages: [{ role: 'user', content: 'hi' }], max_tokens: 100, stream: true }),
    });
    const text = await res.text();
    expect(text).toContain('"content":"hello"');
    expect(text).toMatch(/data: \{"error":/);
    const row = await auditRow(t, res.headers.get('x-request-id'));
    // claude-sonnet-4-5 $3 in, $15 out: 100020 prompt tokens and the 1 output token relayed ("hello").
    expect(row.inputTokens).toBe(100_020);
    near(row.costUsd, (100_020 * 3 + 1 * 15) / 1e6);
    expect(row.pricing).toBe('estimated');
  });
});

describe('a Gemini stream cut mid-way', () => {
  it('is billed from its last usageMetadata, not from a text estimate', async () => {
    const i = CASES.findIndex((c) => c.name === 'gemini long-context tier');
    const partial = { candidates: [{ content: { role: 'model', parts: [{ text: 'hello' }] }, index: 0 }], usageMetadata: { promptTokenCount: 250_000, candidatesTokenCount: 1, totalTokenCount: 250_001 } };
    current = { ...CASES[i], stream: [{ data: partial }, { data: '__drop__' }] };
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys[`k${i}`]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: `p${i}/gemini-2.5-pro`, messages: [{ role: 'user', content: 'hi' }], max_tokens: 100, stream: true }),
    });
    const text = await res.text();
    expect(text).toMatch(/data: \{"error":/);
    const row = await auditRow(t, res.headers.get('x-request-id'));
    // gemini-2.5-pro above 200k: $2.50 in, $15 out; 250000 prompt tokens and 1 output token.
    expect(row.inputTokens).toBe(250_000);
    near(row.costUsd, (250_000 * 2.5 + 1 * 15) / 1e6);
  });
});

describe('gateway usage --json and the key after absurd usage', () => {
  it('usage --json prints each key the sum of its calls, in plain decimals', async () => {
    t.flush();
    const r = await runCli(['usage', '--by', 'key', '--json'], { home: t.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/\de-\d/);
    const rows = JSON.parse(r.stdout) as Array<{ group: string; cost_usd: number }>;
    CASES.forEach((c, i) => {
      // Anthropic's and this Gemini key also paid for the cut streams above; check the others exactly.
      if (c.provider.type === 'anthropic' || c.name === 'gemini long-context tier') return;
      const calls = c.stream ? 2 : 1;
      const row = rows.find((x) => x.group === `k${i}`);
      near(row?.cost_usd, c.expected * calls);
    });
  }, 60_000);

  it('a key that saw 1e308 tokens keeps working (its spend stays finite)', async () => {
    const i = CASES.findIndex((c) => c.name.includes('absurd'));
    current = CASES[0];
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys[`k${i}`]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: `p${i}/${CASES[i].model}`, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }),
    });
    expect(res.status).toBe(200);
  });
});
