/**
 * Presets over the OpenAI-compatible adapter (OpenRouter, DeepSeek, Groq, Mistral, Together, xAI,
 * Ollama, LM Studio, vLLM): base URL and auth, model listing, pricing per preset, and the quirks of
 * OpenAI-compatible servers:
 * - usage on the finish chunk instead of a `choices: []` chunk; `usage: null` on every chunk;
 * - `stream_options` refused with a 400: retried once without it, and remembered (also across a config reload);
 *   Mistral's preset knows it up front;
 * - DeepSeek's `reasoning_content` deltas passed through untouched;
 * - Groq's usage in `x_groq.usage` on the finish chunk.
 * Each preset points at its own fake OpenAI upstream; the DeepSeek-reasoner and Groq shapes come from
 * small scripted upstreams built on the fakes' shared server harness.
 */
import { randomBytes } from 'node:crypto';
import type OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PRESET_NAMES, PRESETS } from '../../core/providers/presets.ts';
import type { PresetName } from '../../core/providers/presets.ts';
import { getCall } from '../../core/storage/audit-queries.ts';
import { startFakeServer } from '../fakes/fault.ts';
import type { Exchange, FakeUpstream, ProviderSpec } from '../fakes/fault.ts';
import { openaiErrorFor, startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway, TestProvider } from '../support/gateway-harness.ts';

type Obj = Record<string, unknown>;

interface PresetCase {
  preset: PresetName;
  baseUrl: string;
  needsKey: boolean;
  /** A model id the way that provider names it. */
  model: string;
  /** Whether the bundled price data prices it for this preset. */
  priced: boolean;
}

const CASES: PresetCase[] = [
  { preset: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', needsKey: true, model: 'anthropic/claude-sonnet-4.5', priced: true },
  { preset: 'deepseek', baseUrl: 'https://api.deepseek.com/v1', needsKey: true, model: 'deepseek-chat', priced: true },
  { preset: 'groq', baseUrl: 'https://api.groq.com/openai/v1', needsKey: true, model: 'llama-3.3-70b-versatile', priced: true },
  { preset: 'mistral', baseUrl: 'https://api.mistral.ai/v1', needsKey: true, model: 'mistral-small-latest', priced: true },
  { preset: 'together', baseUrl: 'https://api.together.xyz/v1', needsKey: true, model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo', priced: true },
  { preset: 'xai', baseUrl: 'https://api.x.ai/v1', needsKey: true, model: 'grok-3-mini', priced: true },
  { preset: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', needsKey: false, model: 'llama3.2:3b', priced: false },
  { preset: 'lmstudio', baseUrl: 'http://127.0.0.1:1234/v1', needsKey: false, model: 'qwen2.5-7b-instruct', priced: false },
  { preset: 'vllm', baseUrl: 'http://127.0.0.1:8000/v1', needsKey: false, model: 'Qwen/Qwen2.5-7B-Instruct', priced: false },
];

const keyOf = (preset: string): string => `sk-${preset}-preset-key-0123456789`;

const fakes = new Map<string, FakeUpstream>();
let quirks: { finishUsage: FakeUpstream; nullUsage: FakeUpstream; refuser: FakeUpstream; reasoner: FakeUpstream; groq: FakeUpstream };
let t: TestGateway;
let client: OpenAI;

// ---- scripted upstreams (shapes the OpenAI fake has no knob for) ----

interface ChatBody {
  model: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

function scripted(models: string[], reply: (x: Exchange, body: ChatBody) => Promise<void>): Promise<FakeUpstream> {
  const spec: ProviderSpec = {
    basePath: '/v1',
    defaultModels: models,
    errorReply: (status) => openaiErrorFor(status),
    handle: async (x) => {
      if (x.method === 'GET' && x.path === '/v1/models') {
        return x.json(200, { object: 'list', data: x.options.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })) });
      }
      if (x.method === 'POST' && x.path === '/v1/chat/completions') return reply(x, x.body as ChatBody);
      return x.json(404, openaiErrorFor(404).body);
    },
  };
  return startFakeServer(spec, { models });
}

const REASONING = ['Two plus ', 'two is four.'];
const ANSWER = ['The answer', ' is 4.'];
const REASONER_USAGE = {
  prompt_tokens: 10,
  completion_tokens: 20,
  total_tokens: 30,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 12 },
  prompt_cache_hit_tokens: 0,
  prompt_cache_miss_tokens: 10,
};

/** DeepSeek-reasoner: `reasoning_content` before `content`, in the message and in deltas. */
function deepseekReasoner(): Promise<FakeUpstream> {
  return scripted(['deepseek-reasoner'], (x, body) => {
    const base = { id: `chatcmpl-${randomBytes(6).toString('hex')}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, system_fingerprint: 'fp_ds' };
    if (body.stream !== true) {
      return x.json(200, {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: ANSWER.join(''), reasoning_content: REASONING.join('') }, logprobs: null, finish_reason: 'stop' }],
        usage: REASONER_USAGE,
      });
    }
    const chunk = (delta: Obj, finish: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const events = [
      chunk({ role: 'assistant', content: null, reasoning_content: '' }),
      ...REASONING.map((r) => chunk({ content: null, reasoning_content: r })),
      ...ANSWER.map((a) => chunk({ content: a, reasoning_content: null })),
      chunk({ content: '', reasoning_content: null }, 'stop'),
    ];
    if (body.stream_options?.include_usage) events.push(JSON.stringify({ ...base, choices: [], usage: REASONER_USAGE }));
    events.push('[DONE]');
    return x.sse(events.map((data) => ({ data })));
  });
}

const GROQ_USAGE = { queue_time: 0.012, prompt_tokens: 12, prompt_time: 0.002, completion_tokens: 3, completion_time: 0.01, total_tokens: 15, total_time: 0.012 };

/**
 * Groq: usage in `x_groq.usage` on the finish chunk. With `standardUsage` it also honours
 * `stream_options` with a standard usage chunk (different numbers, to prove which one wins).
 */
function groqLike(opts: { standardUsage: boolean }): Promise<FakeUpstream> {
  return scripted(['llama-3.1-8b-instant'], (x, body) => {
    const base = { id: `chatcmpl-${randomBytes(6).toString('hex')}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, system_fingerprint: 'fp_groq' };
    const xg = { id: 'req_01groqfake' };
    if (body.stream !== true) {
      return x.json(200, {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from Groq' }, logprobs: null, finish_reason: 'stop' }],
        usage: GROQ_USAGE,
        x_groq: xg,
      });
    }
    const chunk = (delta: Obj, finish: string | null = null, extra: Obj = {}) =>
      JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });
    const events = [
      chunk({ role: 'assistant', content: '' }, null, { x_groq: xg }),
      chunk({ content: 'Hello' }),
      chunk({ content: ' from Groq' }),
      chunk({}, 'stop', { x_groq: { ...xg, usage: GROQ_USAGE } }),
    ];
    if (opts.standardUsage && body.stream_options?.include_usage) {
      events.push(JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 }, x_groq: xg }));
    }
    events.push('[DONE]');
    return x.sse(events.map((data) => ({ data })));
  });
}

let groqStd: FakeUpstream;

beforeAll(async () => {
  const providers: TestProvider[] = [];
  for (const c of CASES) {
    const fake = await startOpenAIUpstream({ models: [c.model], requireKey: c.needsKey ? keyOf(c.preset) : undefined });
    fakes.set(c.preset, fake);
    // What `gateway providers add NAME --preset P --base-url URL` stores: the preset's options, no fixed model list.
    providers.push({
      name: c.preset,
      type: 'openai-compatible',
      preset: c.preset,
      baseUrl: fake.url,
      models: null,
      options: { ...PRESETS[c.preset].options },
      ...(c.needsKey ? { secret: keyOf(c.preset) } : {}),
    });
  }
  quirks = {
    finishUsage: await startOpenAIUpstream({ models: ['quirk-finish-usage'], usageOnFinishChunk: true }),
    nullUsage: await startOpenAIUpstream({ models: ['quirk-null-usage'], usageOnEveryChunk: true }),
    refuser: await startOpenAIUpstream({ models: ['quirk-refuser'], rejectStreamOptions: true }),
    reasoner: await deepseekReasoner(),
    groq: await groqLike({ standardUsage: false }),
  };
  groqStd = await groqLike({ standardUsage: true });
  groqStd.options.models = ['llama-3.1-8b-instant-std'];
  providers.push(
    { name: 'tg-quirk', type: 'openai-compatible', preset: 'together', baseUrl: quirks.finishUsage.url, secret: 'k1', models: ['quirk-finish-usage'] },
    { name: 'null-quirk', type: 'openai-compatible', preset: null, baseUrl: quirks.nullUsage.url, secret: 'k2', models: ['quirk-null-usage'] },
    { name: 'refuser', type: 'openai-compatible', preset: 'vllm', baseUrl: quirks.refuser.url, models: ['quirk-refuser'] },
    { name: 'ds-reasoner', type: 'openai-compatible', preset: 'deepseek', baseUrl: quirks.reasoner.url, secret: 'k3', models: ['deepseek-reasoner'] },
    { name: 'groq-x', type: 'openai-compatible', preset: 'groq', baseUrl: quirks.groq.url, secret: 'k4', models: ['llama-3.1-8b-instant'] },
    { name: 'groq-std', type: 'openai-compatible', preset: 'groq', baseUrl: groqStd.url, secret: 'k5', models: ['llama-3.1-8b-instant-std'] },
  );
  t = await startTestGateway({ providers });
  const store = t.openStore();
  try {
    // Exact, hand-checkable prices for the quirk models.
    store.prices.set('quirk-finish-usage', { inputPerMtok: 1, outputPerMtok: 2 });
    store.prices.set('quirk-refuser', { inputPerMtok: 1, outputPerMtok: 2 });
    store.prices.set('llama-3.1-8b-instant', { inputPerMtok: 0.05, outputPerMtok: 0.08 });
    store.prices.set('llama-3.1-8b-instant-std', { inputPerMtok: 0.05, outputPerMtok: 0.08 });
  } finally {
    store.close();
  }
  t.gw.deps.live.reloadIfChanged();
  client = t.client();
});
afterAll(async () => {
  await t?.close();
  await Promise.all([...fakes.values(), ...Object.values(quirks ?? {}), groqStd].map((f) => f?.close()));
});

async function rawChunks(model: string, includeUsage: boolean): Promise<{ chunks: Obj[]; text: string }> {
  const res = await fetch(`${t.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'quirky stream here' }], ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  const chunks = text
    .split('\n\n')
    .filter((b) => b.startsWith('data: ') && b !== 'data: [DONE]')
    .map((b) => JSON.parse(b.slice(6)) as Obj);
  return { chunks, text };
}

const choicesOf = (c: Obj) => c.choices as Array<{ delta: Obj; finish_reason: string | null }>;

function auditRow(id: string) {
  t.flush();
  const store = t.openStore();
  try {
    return getCall(store.db, id)!;
  } finally {
    store.close();
  }
}

describe('preset table', () => {
  it('covers exactly the documented presets, with their base URLs and key needs', () => {
    expect([...PRESET_NAMES].sort()).toEqual(CASES.map((c) => c.preset).sort());
    for (const c of CASES) {
      expect(PRESETS[c.preset].baseUrl, c.preset).toBe(c.baseUrl);
      expect(PRESETS[c.preset].needsKey, c.preset).toBe(c.needsKey);
      expect(PRESETS[c.preset].keyEnv === null, c.preset).toBe(!c.needsKey);
    }
    // Mistral refuses stream_options: known up front, so its first stream need not fail.
    expect(PRESETS.mistral.options).toEqual({ streamOptions: false });
  });
});

describe.each(CASES)('preset $preset', (c) => {
  it('lists its models at {base}/models with its own auth (none for local servers)', async () => {
    const fake = fakes.get(c.preset)!;
    const listing = fake.requests.find((r) => r.method === 'GET' && r.path === '/v1/models');
    expect(listing).toBeDefined();
    if (c.needsKey) expect(listing!.headers.authorization).toBe(`Bearer ${keyOf(c.preset)}`);
    else expect(listing!.headers.authorization).toBeUndefined();
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toContain(c.model);
  });

  it('chats (non-stream), with the provider key upstream and the preset\'s prices', async () => {
    const { data, response } = await client.chat.completions.create({ model: c.model, messages: [{ role: 'user', content: `hi ${c.preset}` }] }).withResponse();
    expect(data.choices[0].message.content).toBe(`Echo: hi ${c.preset}`);
    expect(response.headers.get('x-gateway-provider')).toBe(c.preset);
    const req = fakes.get(c.preset)!.requests.at(-1)!;
    expect(req.path).toBe('/v1/chat/completions');
    expect((req.body as Obj).model).toBe(c.model);
    if (c.needsKey) expect(req.headers.authorization).toBe(`Bearer ${keyOf(c.preset)}`);
    else expect(req.headers.authorization).toBeUndefined();
    const cost = response.headers.get('x-gateway-cost-usd');
    if (c.priced) expect(Number(cost)).toBeGreaterThan(0);
    else expect(cost).toBeNull();
    expect(auditRow(response.headers.get('x-request-id')!).pricing).toBe(c.priced ? 'priced' : 'unpriced');
  });

  it('streams through the SDK helper, asking for usage unless the preset refuses stream_options', async () => {
    const chunks: ChatCompletionChunk[] = [];
    const runner = client.chat.completions.stream({ model: c.model, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream please' }] });
    runner.on('chunk', (ch) => chunks.push(ch));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('Echo: stream please');
    expect(chunks.at(-1)!.choices).toEqual([]);
    const sent = fakes.get(c.preset)!.requests.at(-1)!.body as Obj;
    if (c.preset === 'mistral') {
      // Not asked, the fake reports no usage: the gateway's usage chunk is an estimate.
      expect(sent).not.toHaveProperty('stream_options');
      expect(chunks.at(-1)!.usage?.completion_tokens).toBeGreaterThan(0);
    } else {
      expect(sent.stream_options).toEqual({ include_usage: true });
      expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    }
  });
});

describe('quirk: usage on the finish chunk (Together and others)', () => {
  it('the finish chunk loses its usage; the client gets one usage chunk, priced from the upstream count', async () => {
    const { chunks } = await rawChunks('quirk-finish-usage', true);
    const finish = chunks.find((ch) => choicesOf(ch)[0]?.finish_reason);
    expect(finish).toBeDefined();
    expect(finish).not.toHaveProperty('usage');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    // prompt = 3 + 3, completion = "Echo: quirky stream here" = 4; $1 / $2 per Mtok → 6 + 8 = 14 µ$
    expect(last.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10, cost: 0.000014 });
    expect(chunks.filter((ch) => 'usage' in ch)).toHaveLength(1);
    // The upstream did put it on the finish chunk (not a separate one).
    expect(quirks.finishUsage.requests.at(-1)!.body).toMatchObject({ stream_options: { include_usage: true } });
  });

  it('without include_usage the client sees no usage at all, and the call is still priced', async () => {
    const res = await client.chat.completions.create({ model: 'quirk-finish-usage', stream: true, messages: [{ role: 'user', content: 'quirky stream here' }] }).withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const ch of res.data) chunks.push(ch);
    expect(chunks.some((ch) => ch.usage)).toBe(false);
    expect(chunks.some((ch) => ch.choices.length === 0)).toBe(false);
    const row = auditRow(res.response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ inputTokens: 6, outputTokens: 4, pricing: 'priced' });
    expect(row.costUsd).toBeCloseTo(0.000014, 12);
  });
});

describe('quirk: `usage: null` on every chunk', () => {
  it('no chunk but the last carries a usage key', async () => {
    const { chunks } = await rawChunks('quirk-null-usage', true);
    expect(chunks.slice(0, -1).filter((ch) => 'usage' in ch)).toHaveLength(0);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4 });
    const none = await rawChunks('quirk-null-usage', false);
    expect(none.chunks.filter((ch) => 'usage' in ch)).toHaveLength(0);
  });
});

describe('quirk: stream_options refused', () => {
  beforeEach(() => {
    quirks.refuser.requests.length = 0;
  });

  it('the first stream is retried once without stream_options; the next ones go without it straight away', async () => {
    const first = await rawChunks('quirk-refuser', true);
    expect(first.chunks.map((ch) => choicesOf(ch)[0]?.delta?.content ?? '').join('')).toBe('Echo: quirky stream here');
    const sent = quirks.refuser.requests.map((r) => r.body as Obj);
    expect(sent).toHaveLength(2);
    expect(sent[0].stream_options).toEqual({ include_usage: true });
    expect(sent[1]).not.toHaveProperty('stream_options');
    // No upstream usage: the gateway estimates it, and says so by pricing it `estimated`.
    const last = first.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect((last.usage as Obj).completion_tokens).toBeGreaterThan(0);

    const res = await client.chat.completions.create({ model: 'quirk-refuser', stream: true, messages: [{ role: 'user', content: 'again' }] }).withResponse();
    for await (const _ of res.data) void _;
    expect(quirks.refuser.requests).toHaveLength(3);
    expect(quirks.refuser.requests[2].body).not.toHaveProperty('stream_options');
    expect(auditRow(res.response.headers.get('x-request-id')!).pricing).toBe('estimated');
  });

  it('what was learned survives a config reload', async () => {
    const store = t.openStore();
    try {
      store.aliases.set('bump-config', [{ provider: 'refuser', model: 'quirk-refuser' }]);
    } finally {
      store.close();
    }
    expect(t.gw.deps.live.reloadIfChanged()).toBe(true);
    const s = await client.chat.completions.create({ model: 'quirk-refuser', stream: true, messages: [{ role: 'user', content: 'after reload' }] });
    for await (const _ of s) void _;
    expect(quirks.refuser.requests).toHaveLength(1);
    expect(quirks.refuser.requests[0].body).not.toHaveProperty('stream_options');
  });

  it('non-stream calls never send stream_options', async () => {
    const r = await client.chat.completions.create({ model: 'quirk-refuser', messages: [{ role: 'user', content: 'plain' }] });
    expect(r.choices[0].message.content).toBe('Echo: plain');
    expect(quirks.refuser.requests).toHaveLength(1);
  });
});

describe('quirk: DeepSeek reasoning_content', () => {
  it('stream: reasoning_content deltas reach the client untouched, and the SDK helper accepts them', async () => {
    const { chunks } = await rawChunks('deepseek-reasoner', true);
    const deltas = chunks.filter((ch) => choicesOf(ch).length > 0).map((ch) => choicesOf(ch)[0].delta);
    expect(deltas[0]).toEqual({ role: 'assistant', content: null, reasoning_content: '' });
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe(REASONING.join(''));
    expect(deltas.map((d) => d.content ?? '').join('')).toBe(ANSWER.join(''));
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 20, completion_tokens_details: { reasoning_tokens: 12 } });

    // The helper accepts the stream. (It assigns unknown delta fields rather than appending them, so its
    // final message keeps DeepSeek's last `reasoning_content: null`: the SDK's doing, not the gateway's.)
    const final = await client.chat.completions.stream({ model: 'deepseek-reasoner', messages: [{ role: 'user', content: '2+2?' }] }).finalChatCompletion();
    expect(final.choices[0].message.content).toBe(ANSWER.join(''));
    expect(final.choices[0].finish_reason).toBe('stop');
  });

  it('non-stream: message.reasoning_content passes through, reasoning tokens recorded', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'deepseek-reasoner', messages: [{ role: 'user', content: '2+2?' }] }).withResponse();
    expect(data.choices[0].message.content).toBe(ANSWER.join(''));
    expect((data.choices[0].message as unknown as Obj).reasoning_content).toBe(REASONING.join(''));
    const row = auditRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ inputTokens: 10, outputTokens: 20, reasoningTokens: 12, pricing: 'priced' });
  });
});

describe('quirk: Groq x_groq.usage', () => {
  it('stream: usage read from x_groq.usage on the finish chunk, removed from it, and priced', async () => {
    const { chunks } = await rawChunks('llama-3.1-8b-instant', true);
    const finish = chunks.find((ch) => choicesOf(ch)[0]?.finish_reason)!;
    expect(finish.x_groq).toEqual({ id: 'req_01groqfake' });
    expect(chunks.slice(0, -1).filter((ch) => 'usage' in ch)).toHaveLength(0);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    // 12 × $0.05 + 3 × $0.08 per Mtok = 0.84 µ$
    expect(last.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect((last.usage as Obj).cost).toBeCloseTo(0.00000084, 14);
    // Groq's first chunk keeps its x_groq id, byte for byte.
    expect(chunks[0].x_groq).toEqual({ id: 'req_01groqfake' });
  });

  it('stream without include_usage: still priced from x_groq.usage, not estimated', async () => {
    const res = await client.chat.completions.create({ model: 'llama-3.1-8b-instant', stream: true, messages: [{ role: 'user', content: 'hi groq' }] }).withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const ch of res.data) chunks.push(ch);
    expect(chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('Hello from Groq');
    expect(chunks.some((ch) => ch.usage)).toBe(false);
    const row = auditRow(res.response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ inputTokens: 12, outputTokens: 3, pricing: 'priced' });
  });

  it('a standard usage chunk, when Groq also sends one, wins over x_groq.usage', async () => {
    const { chunks } = await rawChunks('llama-3.1-8b-instant-std', true);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 });
    expect(chunks.filter((ch) => 'usage' in ch)).toHaveLength(1);
  });
});
