/**
 * Failover between an Anthropic and an OpenAI-compatible upstream serving the same alias. The first
 * provider fails with a status fault; the client must get the second provider's answer, streamed and
 * not, translated into the same OpenAI shape, with the attempts recorded. Each test ends with both
 * providers healthy again (a success resets the circuit breaker), so tests do not leak into each other.
 */
import type OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import type { Fault, FakeUpstream } from '../fakes/fault.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let an: FakeUpstream;
let oc: FakeUpstream;
let t: TestGateway;
let client: OpenAI;

const ANTHROPIC_FIRST = 'smart';
const COMPAT_FIRST = 'smart-compat-first';

beforeAll(async () => {
  an = await startAnthropicUpstream();
  oc = await startOpenAIUpstream();
  t = await startTestGateway({
    providers: [
      { name: 'claude', type: 'anthropic', baseUrl: an.url, secret: 'sk-ant-failover', models: ['claude-sonnet-4-5'] },
      // An OpenAI-compatible upstream (OpenRouter-style) serving its own id for the same model.
      { name: 'router', type: 'openai-compatible', preset: 'openrouter', baseUrl: oc.url, secret: 'sk-or-failover', models: ['anthropic/claude-sonnet-4.5'] },
    ],
  });
  const store = t.openStore();
  try {
    store.aliases.set(ANTHROPIC_FIRST, [{ provider: 'claude', model: 'claude-sonnet-4-5' }, { provider: 'router', model: 'anthropic/claude-sonnet-4.5' }], 'priority');
    store.aliases.set(COMPAT_FIRST, [{ provider: 'router', model: 'anthropic/claude-sonnet-4.5' }, { provider: 'claude', model: 'claude-sonnet-4-5' }], 'priority');
  } finally {
    store.close();
  }
  t.gw.deps.live.reloadIfChanged();
  client = t.client();
});
afterAll(async () => {
  await t?.close();
  await Promise.all([an?.close(), oc?.close()]);
});
beforeEach(() => {
  an.setDefaultFault(null);
  oc.setDefaultFault(null);
});

const MESSAGES = [{ role: 'user' as const, content: 'fail over please' }];
const TEXT = 'Echo: fail over please';
const weatherTool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

function counts() {
  return { an: an.requests.length, oc: oc.requests.length };
}

/** A direct success on each provider closes its breaker again. */
async function healAll(): Promise<void> {
  await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'heal' }] });
  await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4.5', messages: [{ role: 'user', content: 'heal' }] });
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

interface Direction {
  alias: string;
  first: FakeUpstream;
  firstName: string;
  second: FakeUpstream;
  secondName: string;
  secondModel: string;
}

const directions = (): Direction[] => [
  { alias: ANTHROPIC_FIRST, first: an, firstName: 'claude', second: oc, secondName: 'router', secondModel: 'anthropic/claude-sonnet-4.5' },
  { alias: COMPAT_FIRST, first: oc, firstName: 'router', second: an, secondName: 'claude', secondModel: 'claude-sonnet-4-5' },
];

const FAULTS: Array<{ label: string; fault: (d: Direction) => Fault }> = [
  // 529 is Anthropic's "overloaded"; the OpenAI-compatible side gets a plain 503.
  { label: 'overloaded (529 / 503)', fault: (d) => ({ kind: 'status', status: d.first === an ? 529 : 503 }) },
  { label: 'server error 500', fault: () => ({ kind: 'status', status: 500 }) },
  { label: 'its key rejected (401)', fault: () => ({ kind: 'status', status: 401 }) },
];

describe.each([
  ['Anthropic first, OpenAI-compatible second', 0],
  ['OpenAI-compatible first, Anthropic second', 1],
] as const)('failover: %s', (_label, dirIndex) => {
  afterEachHeal();

  it.each(FAULTS)('non-stream: $label', async ({ fault }) => {
    const d = directions()[dirIndex];
    d.first.setDefaultFault(fault(d));
    const before = counts();
    const { data, response } = await client.chat.completions.create({ model: d.alias, messages: MESSAGES }).withResponse();
    d.first.setDefaultFault(null);
    expect(data.choices[0].message.content).toBe(TEXT);
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.object).toBe('chat.completion');
    expect(data.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect(response.headers.get('x-gateway-provider')).toBe(d.secondName);
    expect(response.headers.get('x-gateway-model')).toBe(d.secondModel);
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    // Priced by the provider that answered (bundled prices for both ids).
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeGreaterThan(0);
    const after = counts();
    expect(after.an - before.an).toBe(1);
    expect(after.oc - before.oc).toBe(1);
    const row = auditRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 200, provider: d.secondName, modelRequested: d.alias, attempts: 2 });
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      [d.firstName, expect.any(Number)],
      [d.secondName, 200],
    ]);
    expect(row.attemptList[0].status).toBeGreaterThanOrEqual(400);
  });

  it.each(FAULTS)('stream: $label', async ({ fault }) => {
    const d = directions()[dirIndex];
    d.first.setDefaultFault(fault(d));
    const before = counts();
    const { data, response } = await client.chat.completions
      .create({ model: d.alias, messages: MESSAGES, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of data) chunks.push(c);
    d.first.setDefaultFault(null);
    // Headers wait for the first good event, so they name the provider that answered.
    expect(response.headers.get('x-gateway-provider')).toBe(d.secondName);
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(TEXT);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect((last.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
    const after = counts();
    expect(after.an - before.an).toBe(1);
    expect(after.oc - before.oc).toBe(1);
    const row = auditRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 200, stream: true, provider: d.secondName, attempts: 2, inputTokens: 6, outputTokens: 4, pricing: 'priced' });
  });

  it.each([
    { label: 'a 200 whose first event is garbage', fault: { kind: 'malformed' } as Fault },
    { label: 'a 200 that closes before any event', fault: { kind: 'reset-after-chunks', chunks: 0 } as Fault },
    { label: 'a connection reset', fault: { kind: 'reset' } as Fault },
  ])('stream: $label before the first byte still fails over', async ({ fault }) => {
    const d = directions()[dirIndex];
    d.first.queueFault(fault);
    const { data, response } = await client.chat.completions.create({ model: d.alias, messages: MESSAGES, stream: true }).withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of data) chunks.push(c);
    expect(response.headers.get('x-gateway-provider')).toBe(d.secondName);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(TEXT);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
  });

  it('stream: a streamed tool call survives failover, with the SDK helper accepting it', async () => {
    const d = directions()[dirIndex];
    d.first.setDefaultFault({ kind: 'status', status: 500 });
    const runner = client.chat.completions.stream({ model: d.alias, messages: [{ role: 'user', content: 'weather in Paris?' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    d.first.setDefaultFault(null);
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    const call = final.choices[0].message.tool_calls![0];
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });
});

describe('what does not fail over', () => {
  afterEachHeal();

  it('a 400 from the first provider is the client\'s mistake: straight back, no second attempt', async () => {
    an.queueFault({ kind: 'status', status: 400 });
    const before = counts();
    const err = await client.chat.completions.create({ model: ANTHROPIC_FIRST, messages: MESSAGES }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect((err as { error: { type: string } }).error.type).toBe('invalid_request_error');
    expect(counts().oc - before.oc).toBe(0);
  });

  it('both failing: one 502 naming each attempt (stream too, before any byte)', async () => {
    an.setDefaultFault({ kind: 'status', status: 500 });
    oc.setDefaultFault({ kind: 'status', status: 500 });
    const err = await client.chat.completions.create({ model: ANTHROPIC_FIRST, messages: MESSAGES }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502 });
    const message = String((err as { error: { message: string } }).error.message);
    expect(message).toContain('claude');
    expect(message).toContain('router');
    const serr = await (async () => {
      const s = await client.chat.completions.create({ model: ANTHROPIC_FIRST, messages: MESSAGES, stream: true });
      for await (const _ of s) void _;
    })().catch((e: unknown) => e);
    expect(serr).toMatchObject({ status: 502 });
    an.setDefaultFault(null);
    oc.setDefaultFault(null);
  });
});

function afterEachHeal(): void {
  // Registered per describe so a failed test still leaves the providers healthy for the next one.
  beforeEach(async () => {
    an.setDefaultFault(null);
    oc.setDefaultFault(null);
    await healAll();
  });
}
