/**
 * Cost per provider usage shape, checked against prices computed by hand:
 * - Anthropic: `input_tokens` excludes cache reads and writes; both are billed at their own rates.
 * - Gemini: `promptTokenCount` includes cached tokens; `thoughtsTokenCount` is billed as output.
 * - OpenAI: `prompt_tokens` includes `cached_tokens`; `completion_tokens` includes reasoning.
 * Bundled prices (genai-prices) for claude-sonnet-4-5, gemini-2.5-flash and gpt-4o, and user prices
 * set through the Store for models the bundled data does not know. The cost is read from
 * `x-gateway-cost-usd`, from `usage.cost` (body or the stream's usage chunk) and from the audit row.
 */
import type OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

type Obj = Record<string, unknown>;

let an: FakeUpstream;
let ge: FakeUpstream;
let oa: FakeUpstream;
let t: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  an = await startAnthropicUpstream();
  ge = await startGeminiUpstream();
  oa = await startOpenAIUpstream();
  t = await startTestGateway({
    providers: [
      { name: 'an', type: 'anthropic', baseUrl: an.url, secret: 'sk-ant-cost', models: ['claude-sonnet-4-5', 'claude-house-1', 'claude-unpriced-9'] },
      { name: 'ge', type: 'gemini', baseUrl: ge.url, secret: 'gem-cost', models: ['gemini-2.5-flash', 'gemini-house-1'] },
      { name: 'oa', type: 'openai', baseUrl: oa.url, secret: 'sk-oa-cost', models: ['gpt-4o', 'gpt-house-1'] },
    ],
  });
  client = t.client();
  const store = t.openStore();
  try {
    store.prices.set('claude-house-1', { inputPerMtok: 1, outputPerMtok: 5, cacheReadPerMtok: 0.1, cacheWritePerMtok: 1.25 });
    store.prices.set('gemini-house-1', { inputPerMtok: 2, outputPerMtok: 8, cacheReadPerMtok: 0.5 });
    store.prices.set('gpt-house-1', { inputPerMtok: 4, outputPerMtok: 16, cacheReadPerMtok: 2 });
  } finally {
    store.close();
  }
  // The server polls the config version; reload now rather than wait for the next tick.
  t.gw.deps.live.reloadIfChanged();
});
afterAll(async () => {
  await t?.close();
  await Promise.all([an?.close(), ge?.close(), oa?.close()]);
});
beforeEach(() => {
  for (const f of [an, ge, oa]) {
    f.options.cachedTokens = undefined;
    f.options.cacheWriteTokens = undefined;
    f.options.reasoningTokens = undefined;
  }
});

/** "price this call" → prompt = 3 words + 3 = 6; reply "Echo: price this call" = 4 words. */
const MESSAGES = [{ role: 'user' as const, content: 'price this call' }];
const PROMPT = 6;
const REPLY = 4;

interface Seen {
  usage: Obj;
  headerCost: string | null;
  bodyCost: number;
  requestId: string;
}

async function nonStream(model: string): Promise<Seen> {
  const { data, response } = await client.chat.completions.create({ model, messages: MESSAGES }).withResponse();
  const usage = data.usage as unknown as Obj;
  return { usage, headerCost: response.headers.get('x-gateway-cost-usd'), bodyCost: usage.cost as number, requestId: response.headers.get('x-request-id')! };
}

async function stream(model: string): Promise<Seen> {
  const { data, response } = await client.chat.completions
    .create({ model, messages: MESSAGES, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of data) chunks.push(c);
  const usage = chunks.at(-1)!.usage as unknown as Obj;
  // A stream's headers leave before its usage is known: the cost rides on the usage chunk.
  return { usage, headerCost: null, bodyCost: usage.cost as number, requestId: response.headers.get('x-request-id')! };
}

function auditRow(id: string) {
  t.flush();
  const store = t.openStore();
  try {
    return getCall(store.db, id)!;
  } finally {
    store.close();
  }
}

interface Case {
  name: string;
  model: string;
  setup: () => void;
  usage: { prompt: number; completion: number; cached: number; cacheWrite?: number; reasoning: number };
  /** Hand-computed: tokens × USD per million tokens. */
  expectedUsd: number;
  expectedHeader: string;
}

const CASES: Case[] = [
  {
    name: 'Anthropic, bundled claude-sonnet-4-5: cache reads and writes, thinking inside output',
    model: 'claude-sonnet-4-5',
    setup: () => {
      an.options.cachedTokens = 2000;
      an.options.cacheWriteTokens = 1000;
      an.options.reasoningTokens = 50;
    },
    // input_tokens 6 (uncached) + cache read 2000 + cache write 1000 = 3006; output 4 + 50 thinking = 54
    usage: { prompt: 3006, completion: 54, cached: 2000, cacheWrite: 1000, reasoning: 0 },
    // $3 in, $15 out, $0.30 cache read, $3.75 cache write: 6×3 + 2000×0.3 + 1000×3.75 + 54×15 = 5178 µ$
    expectedUsd: 0.005178,
    expectedHeader: '0.005178',
  },
  {
    name: 'Gemini, bundled gemini-2.5-flash: cached content, thoughts billed as output',
    model: 'gemini-2.5-flash',
    setup: () => {
      ge.options.cachedTokens = 1000;
      ge.options.reasoningTokens = 200;
    },
    // promptTokenCount 1006 (includes 1000 cached); candidates 4 + thoughts 200 = 204
    usage: { prompt: 1006, completion: 204, cached: 1000, reasoning: 200 },
    // $0.30 in, $2.50 out, $0.03 cache read: 6×0.3 + 1000×0.03 + 204×2.5 = 541.8 µ$
    expectedUsd: 0.0005418,
    expectedHeader: '0.0005418',
  },
  {
    name: 'OpenAI, bundled gpt-4o: cached prompt tokens, reasoning inside completion',
    model: 'gpt-4o',
    setup: () => {
      oa.options.cachedTokens = 1000;
      oa.options.reasoningTokens = 100;
    },
    usage: { prompt: 1006, completion: 104, cached: 1000, reasoning: 100 },
    // $2.50 in, $10 out, $1.25 cache read: 6×2.5 + 1000×1.25 + 104×10 = 2305 µ$
    expectedUsd: 0.002305,
    expectedHeader: '0.002305',
  },
  {
    name: 'Anthropic, user price with cache read and write rates',
    model: 'claude-house-1',
    setup: () => {
      an.options.cachedTokens = 400;
      an.options.cacheWriteTokens = 800;
      an.options.reasoningTokens = 6;
    },
    usage: { prompt: 1206, completion: 10, cached: 400, cacheWrite: 800, reasoning: 0 },
    // $1 in, $5 out, $0.10 read, $1.25 write: 6×1 + 400×0.1 + 800×1.25 + 10×5 = 1096 µ$
    expectedUsd: 0.001096,
    expectedHeader: '0.001096',
  },
  {
    name: 'Gemini, user price',
    model: 'gemini-house-1',
    setup: () => {
      ge.options.cachedTokens = 100;
      ge.options.reasoningTokens = 10;
    },
    usage: { prompt: 106, completion: 14, cached: 100, reasoning: 10 },
    // $2 in, $8 out, $0.50 read: 6×2 + 100×0.5 + 14×8 = 174 µ$
    expectedUsd: 0.000174,
    expectedHeader: '0.000174',
  },
  {
    name: 'OpenAI, user price',
    model: 'gpt-house-1',
    setup: () => {
      oa.options.cachedTokens = 100;
      oa.options.reasoningTokens = 10;
    },
    usage: { prompt: 106, completion: 14, cached: 100, reasoning: 10 },
    // $4 in, $16 out, $2 read: 6×4 + 100×2 + 14×16 = 448 µ$
    expectedUsd: 0.000448,
    expectedHeader: '0.000448',
  },
];

describe.each(['non-stream', 'stream'] as const)('cost (%s)', (mode) => {
  it.each(CASES)('$name', async (c) => {
    c.setup();
    const seen = mode === 'stream' ? await stream(c.model) : await nonStream(c.model);
    const u = seen.usage;
    expect(u.prompt_tokens).toBe(c.usage.prompt);
    expect(u.completion_tokens).toBe(c.usage.completion);
    expect(u.total_tokens).toBe(c.usage.prompt + c.usage.completion);
    expect((u.prompt_tokens_details as Obj).cached_tokens).toBe(c.usage.cached);
    expect((u.completion_tokens_details as Obj).reasoning_tokens).toBe(c.usage.reasoning);
    if (c.usage.cacheWrite !== undefined) expect((u.prompt_tokens_details as Obj).cache_write_tokens).toBe(c.usage.cacheWrite);
    expect(seen.bodyCost).toBeCloseTo(c.expectedUsd, 12);
    if (mode === 'non-stream') expect(seen.headerCost).toBe(c.expectedHeader);

    const row = auditRow(seen.requestId);
    expect(row.pricing).toBe('priced');
    expect(row.costUsd).toBeCloseTo(c.expectedUsd, 12);
    expect(row.inputTokens).toBe(c.usage.prompt);
    expect(row.outputTokens).toBe(c.usage.completion);
    expect(row.cachedTokens).toBe(c.usage.cached);
    expect(row.cacheWriteTokens).toBe(c.usage.cacheWrite ?? 0);
    expect(row.reasoningTokens).toBe(c.usage.reasoning);
  });
});

describe('edge cases', () => {
  it('a model nobody prices has no cost header and no usage.cost, and is recorded unpriced', async () => {
    const seen = await nonStream('claude-unpriced-9');
    expect(seen.headerCost).toBeNull();
    expect(seen.usage).not.toHaveProperty('cost');
    expect(seen.usage.prompt_tokens).toBe(PROMPT);
    expect(seen.usage.completion_tokens).toBe(REPLY);
    expect(auditRow(seen.requestId)).toMatchObject({ pricing: 'unpriced', costUsd: null });
  });

  it('cache writes without a user write rate are billed at the input rate', async () => {
    const store = t.openStore();
    try {
      store.prices.set('claude-unpriced-9', { inputPerMtok: 2, outputPerMtok: 10 });
    } finally {
      store.close();
    }
    t.gw.deps.live.reloadIfChanged();
    an.options.cachedTokens = 100;
    an.options.cacheWriteTokens = 300;
    const seen = await nonStream('claude-unpriced-9');
    // 6×2 + 100×2 + 300×2 + 4×10 = 852 µ$
    expect(seen.headerCost).toBe('0.000852');
    expect(seen.bodyCost).toBeCloseTo(0.000852, 12);
  });

  it('the cost header is a plain decimal even for a tiny amount', async () => {
    const store = t.openStore();
    try {
      store.prices.set('gpt-house-1', { inputPerMtok: 0.001, outputPerMtok: 0.002 });
    } finally {
      store.close();
    }
    t.gw.deps.live.reloadIfChanged();
    const seen = await nonStream('gpt-house-1');
    // 6×0.001 + 4×0.002 = 0.014 µ$ = 1.4e-8 USD
    expect(seen.headerCost).toBe('0.000000014');
    expect(seen.bodyCost).toBeCloseTo(1.4e-8, 15);
  });
});
