/**
 * Anthropic Messages inbound (`/v1/messages`), driven by the official `@anthropic-ai/sdk`: pass-through
 * to an Anthropic upstream (headers, unknown fields and thinking signatures untouched, error bodies
 * verbatim), translation to OpenAI and Gemini upstreams (streamed tool use, usage in Anthropic's
 * semantics, pings during silences), count_tokens, the error envelope and its statuses, the model list.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setKeepAliveInterval } from '../../core/pipeline/relay.ts';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { unpricedByKey } from '../../core/storage/log-search.ts';
import { auditRow } from '../support/call-checks.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { dbOf } from '../support/sqlite-db.ts';

let t: TestGateway;
let claude: FakeUpstream;
let openai: FakeUpstream;
let gemini: FakeUpstream;
let root: string;

const WEATHER_TOOL = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

beforeAll(async () => {
  claude = await startAnthropicUpstream({ models: ['claude-sonnet-4-6'] });
  openai = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  gemini = await startGeminiUpstream({ models: ['gemini-2.5-flash'] });
  t = await startTestGateway({
    providers: [
      { name: 'claude', type: 'anthropic', baseUrl: claude.url, models: ['claude-sonnet-4-6'], secret: 'anthropic-upstream-secret' },
      { name: 'oai', type: 'openai', baseUrl: openai.url, models: ['gpt-4o-mini'], secret: 'openai-upstream-secret' },
      { name: 'gem', type: 'gemini', baseUrl: gemini.url, models: ['gemini-2.5-flash'], secret: 'gemini-upstream-secret' },
    ],
    keys: [{ name: 'agent' }, { name: 'budgeted', budgetUsd: 0.000005 }, { name: 'limited', rpm: 1 }],
  });
  root = t.baseUrl.replace(/\/v1$/, '');
});

afterAll(async () => {
  await t?.close();
  await Promise.all([claude?.close(), openai?.close(), gemini?.close()]);
});

afterEach(() => {
  claude.options.thinking = undefined;
  claude.options.toolCall = undefined;
  claude.setDefaultFault(null);
  openai.setDefaultFault(null);
  setKeepAliveInterval(10_000);
});

const sdk = (apiKey = t.keys.agent, opts: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}) =>
  new Anthropic({ apiKey, baseURL: root, maxRetries: 0, timeout: 20_000, ...opts });

const lastBody = (fake: FakeUpstream) => fake.requests.at(-1)!.body as Record<string, unknown>;

describe("Claude Code's request shape on an older OpenAI chat model", () => {
  it('effort and adaptive thinking are not sent to gpt-4o-mini, and its 32,000 cap becomes the model\'s 16,384', async () => {
    const params = {
      model: 'gpt-4o-mini',
      max_tokens: 32_000,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
      messages: [{ role: 'user', content: 'hello' }],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const msg = await sdk().messages.create(params);
    expect(msg.content[0]).toMatchObject({ type: 'text' });
    const sent = lastBody(openai);
    expect(sent.reasoning_effort).toBeUndefined();
    expect(sent.max_completion_tokens).toBe(16_384);
  });
});

describe('pass-through to an Anthropic upstream', () => {
  it('a stream cut mid-way pays for the text it relayed, not the 1 output token of message_start, and says it is estimated', async () => {
    // message_start, content_block_start, then word deltas: the body ends cleanly after a few of them.
    claude.queueFault({ kind: 'end-after-chunks', chunks: 7 });
    const res = await fetch(`${root}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.keys.agent, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 200, stream: true, messages: [{ role: 'user', content: 'alpha beta gamma delta epsilon zeta eta theta iota kappa' }] }),
    });
    const text = await res.text();
    expect(text).toContain('event: error');
    const relayed = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(relayed.split(' ').length).toBeGreaterThanOrEqual(3);
    const row = await auditRow(t, res.headers.get('x-request-id'));
    expect(row.status).toBe(502);
    expect(row.outputTokens).toBeGreaterThan(1);
    expect(row.pricing).toBe('estimated');
  });

  it('messages.create: the answer as Anthropic sent it with usage.cost added, cost in a header, one audit row with user agent and session', async () => {
    const { data, response } = await sdk()
      .messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }, { headers: { 'x-claude-code-session-id': 'sess-123' } })
      .withResponse();
    expect(data.id).toMatch(/^msg_/);
    expect(data.content).toEqual([{ type: 'text', text: 'Echo: hello there' }]);
    expect(data.stop_reason).toBe('end_turn');
    expect(data.usage.input_tokens).toBe(5);
    expect(response.headers.get('x-gateway-provider')).toBe('claude');
    expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeGreaterThan(0);
    // The same figure in the body, as every front end gives it: `usage.cost`, a plain decimal.
    expect(String((data.usage as unknown as { cost: number }).cost)).toBe(response.headers.get('x-gateway-cost-usd'));
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: '/v1/messages', status: 200, provider: 'claude', keyName: 'agent', inputTokens: 5, sessionId: 'sess-123' });
    expect(row.userAgent).toMatch(/Anthropic\/JS/);
    expect(row.costUsd).toBeGreaterThan(0);
  });

  it('anthropic-beta, anthropic-version and unknown body fields reach the upstream unchanged; only model is rewritten', async () => {
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 40,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'cache me', cache_control: { type: 'ephemeral' } }] }],
      system: [{ type: 'text', text: 'attribution block' }, { type: 'text', text: 'You are helpful', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      some_future_field: { x: 1 },
      metadata: { user_id: 'u-1' },
    };
    const res = await fetch(`${root}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.keys.agent, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,context-management-2025-06-27' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const sent = claude.requests.at(-1)!;
    expect(sent.headers['anthropic-beta']).toBe('claude-code-20250219,context-management-2025-06-27');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['x-api-key']).toBe('anthropic-upstream-secret');
    expect(sent.body).toEqual(body);
  });

  it('stream().finalMessage(): events relayed as sent, pings included; a signed thinking block comes back and goes up untouched', async () => {
    claude.options.thinking = { text: 'Let me think.', signature: 'EqQBCgIYAh-signature-xyz==' };
    const client = sdk();
    const stream = client.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'think about it' }] });
    const first = await stream.finalMessage();
    expect(first.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCgIYAh-signature-xyz==' });
    expect(first.content[1]).toMatchObject({ type: 'text', text: 'Echo: think about it' });
    // The raw stream: Anthropic's own events (its ping included), once each, in order.
    const raw = await (
      await fetch(`${root}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': t.keys.agent, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 2000, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      })
    ).text();
    const names = [...raw.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(raw).toContain('"signature":"EqQBCgIYAh-signature-xyz=="');
    // Turn 2 sends the block back: the fake rejects any signature it did not issue, so a 200 proves it is intact.
    const second = await client.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'think about it' },
        { role: 'assistant', content: first.content.map((b) => (b.type === 'thinking' ? { type: 'thinking' as const, thinking: b.thinking, signature: b.signature } : { type: 'text' as const, text: b.type === 'text' ? b.text : '' })) },
        { role: 'user', content: 'and now?' },
      ],
    });
    expect(second.content.at(-1)).toMatchObject({ type: 'text', text: 'Echo: and now?' });
    const sentBack = (lastBody(claude).messages as Array<{ content: unknown }>)[1].content as Array<Record<string, unknown>>;
    expect(sentBack[0]).toEqual({ type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCgIYAh-signature-xyz==' });
  });

  it("an upstream client error is passed through verbatim with its status (Claude Code's recovery reads it)", async () => {
    claude.options.thinking = { text: 't', signature: 'the-real-one' };
    const res = await fetch(`${root}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.keys.agent}`, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 'forged' }, { type: 'text', text: 'a' }] }, { role: 'user', content: 'q2' }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string }; request_id: string };
    expect(body.error).toEqual({ type: 'invalid_request_error', message: 'messages.1.content.0: Invalid `signature` in `thinking` block' });
    expect(body.request_id).toMatch(/^req_|^[0-9a-f-]+/);
  });

  it('countTokens is proxied to Anthropic and never billed', async () => {
    const before = claude.requests.length;
    const r = await sdk().messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'count these four words' }] });
    expect(r.input_tokens).toBe(7);
    expect(claude.requests.at(-1)!.path).toBe('/v1/messages/count_tokens');
    expect(claude.requests.length).toBe(before + 1);
  });

  it('countTokens is recorded as priced at zero (proxied or counted locally), never in the unpriced lists', async () => {
    const proxied = await sdk().messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'count me' }] }).withResponse();
    const local = await sdk().messages.countTokens({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count me' }] }).withResponse();
    const a = await auditRow(t, proxied.response.headers.get('x-request-id'));
    expect(a).toMatchObject({ endpoint: '/v1/messages/count_tokens', status: 200, provider: 'claude', pricing: 'priced', costUsd: 0 });
    const b = await auditRow(t, local.response.headers.get('x-request-id'));
    expect(b).toMatchObject({ endpoint: '/v1/messages/count_tokens', status: 200, costUsd: 0 });
    expect(b.pricing).not.toBe('unpriced');
    t.flush();
    const unpriced = dbOf(t.gw).prepare("SELECT COUNT(*) AS n FROM calls WHERE endpoint = '/v1/messages/count_tokens' AND pricing = 'unpriced'").get() as { n: number };
    expect(unpriced.n).toBe(0);
    expect(unpricedByKey(dbOf(t.gw), 0)).toEqual([]);
  });
});

describe('translated to an OpenAI upstream', () => {
  it('streamed tool use: input_json_delta fragments build the input; the tool_result round trip answers', async () => {
    const client = sdk();
    const stream = client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 200, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'weather in Paris?' }] });
    const deltas: string[] = [];
    stream.on('inputJson', (partial) => deltas.push(partial));
    const msg = await stream.finalMessage();
    expect(msg.stop_reason).toBe('tool_use');
    const use = msg.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    expect(deltas.length).toBeGreaterThan(1);
    // Usage in Anthropic's semantics: the fake's prompt tokens (no cache here).
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBe(2);
    // The streamed message_delta's usage names the cost too, as chat's usage chunk does (the SDK keeps only
    // the token counts of it, so the event is read as sent).
    const raw = await fetch(`${root}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.keys.agent, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hello there' }] }),
    });
    const delta = /event: message_delta\ndata: (.*)\n/.exec(await raw.text());
    expect(JSON.parse(delta?.[1] ?? '{}').usage.cost).toBeGreaterThan(0);

    const { data: final, response: finalResponse } = await client.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 200,
      tools: [WEATHER_TOOL],
      system: [{ type: 'text', text: 'Be brief' }],
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: msg.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as { id: string }).id, content: 'sunny 21C' }] },
      ],
    }).withResponse();
    expect(String((final.usage as unknown as { cost: number }).cost)).toBe(finalResponse.headers.get('x-gateway-cost-usd'));
    expect(final.content).toEqual([{ type: 'text', text: '[sys:Be brief] Tool said: sunny 21C' }]);
    expect(final.stop_reason).toBe('end_turn');
    const sent = lastBody(openai) as { messages: Array<Record<string, unknown>>; tools: unknown[] };
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief' });
    expect(sent.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: (use as { id: string }).id, content: 'sunny 21C' });
    expect((sent.messages[2] as { tool_calls: unknown[] }).tool_calls).toEqual([{ id: (use as { id: string }).id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
  });

  it('cached prompt tokens are reported the Anthropic way: input_tokens excludes cache reads', async () => {
    openai.options.cachedTokens = 3;
    try {
      const msg = await sdk().messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] });
      expect(msg.usage.cache_read_input_tokens).toBe(3);
      expect(msg.usage.input_tokens).toBe(5 + 3 - 3);
    } finally {
      openai.options.cachedTokens = undefined;
    }
  });

  it('a tool name longer than OpenAI allows is shortened upstream and mapped back', async () => {
    const long = `mcp__some_server__${'very_long_tool_name_'.repeat(4)}end`;
    expect(long.length).toBeGreaterThan(64);
    const msg = await sdk().messages.create({ model: 'gpt-4o-mini', max_tokens: 50, tools: [{ ...WEATHER_TOOL, name: long }], messages: [{ role: 'user', content: 'go' }] });
    const sentName = ((lastBody(openai).tools as Array<{ function: { name: string } }>)[0]).function.name;
    expect(sentName.length).toBeLessThanOrEqual(64);
    expect(msg.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: long });
  });

  it('pings keep a silent upstream from looking dead', async () => {
    setKeepAliveInterval(50);
    openai.setDefaultFault({ kind: 'slow-stream', gapMs: 250 });
    const res = await fetch(`${root}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.keys.agent, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'a b c' }] }),
    });
    const text = await res.text();
    expect(text).toContain('event: ping\ndata: {"type": "ping"}');
    expect(text.indexOf('event: message_start')).toBeLessThan(text.indexOf('event: ping'));
    expect(text.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
  });

  it('countTokens for a non-Anthropic model is estimated locally, system and tools included', async () => {
    const before = openai.requests.length;
    const small = await sdk().messages.countTokens({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const big = await sdk().messages.countTokens({ model: 'gpt-4o-mini', system: 'You are a careful assistant.', tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'hi' }] });
    expect(small.input_tokens).toBeGreaterThan(0);
    expect(big.input_tokens).toBeGreaterThan(small.input_tokens + 10);
    expect(openai.requests.length).toBe(before);
  });
});

describe('translated to a Gemini upstream', () => {
  it('create and a streamed tool call', async () => {
    const msg = await sdk().messages.create({ model: 'gemini-2.5-flash', max_tokens: 50, messages: [{ role: 'user', content: 'hello gemini' }] });
    expect(msg.content).toEqual([{ type: 'text', text: 'Echo: hello gemini' }]);
    const tool = await sdk().messages.stream({ model: 'gemini-2.5-flash', max_tokens: 50, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'weather?' }] }).finalMessage();
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
  });
});

describe("errors in Anthropic's envelope", () => {
  it('401 AuthenticationError for a bad key, in x-api-key or Bearer', async () => {
    await expect(sdk('sk-gw-nope').messages.create({ model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(new Anthropic({ authToken: 'sk-gw-nope', apiKey: null, baseURL: root, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401, error: { type: 'error', error: { type: 'authentication_error' } } });
  });

  it('a Bearer gateway key works (ANTHROPIC_AUTH_TOKEN)', async () => {
    const msg = await new Anthropic({ authToken: t.keys.agent, apiKey: null, baseURL: root, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(msg.type).toBe('message');
  });

  it('402 billing_error once the budget is spent', async () => {
    const client = sdk(t.keys.budgeted);
    let err: unknown;
    for (let i = 0; i < 8 && !err; i++) {
      try {
        await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'spend some money please now' }] });
      } catch (e) {
        err = e;
      }
    }
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err).toMatchObject({ status: 402, error: { type: 'error', error: { type: 'billing_error' } } });
    expect((err as InstanceType<typeof Anthropic.APIError>).headers?.get('x-should-retry')).toBe('false');
  });

  it('429 RateLimitError with retry-after for a key over its limit', async () => {
    const client = sdk(t.keys.limited);
    await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    const err = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(Number((err as InstanceType<typeof Anthropic.RateLimitError>).headers?.get('retry-after'))).toBeGreaterThan(0);
  });

  it('529 overloaded_error when every provider is down', async () => {
    openai.setDefaultFault({ kind: 'status', status: 503 });
    const err = await sdk().messages.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 529, error: { type: 'error', error: { type: 'overloaded_error' } } });
  });

  it('a provider that refuses its own key is a 502 api_error naming it, not "overloaded", and not worth a retry', async () => {
    openai.setDefaultFault({ kind: 'status', status: 401 });
    const err = await sdk().messages.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err).toMatchObject({ status: 502, error: { type: 'error', error: { type: 'api_error' } } });
    expect(String((err as Error).message)).toMatch(/rejected its API key/);
    expect((err as InstanceType<typeof Anthropic.APIError>).headers?.get('x-should-retry')).toBe('false');
    // A provider's own 500 is a failure too, not an overload.
    openai.setDefaultFault({ kind: 'status', status: 500 });
    const broken = await sdk().messages.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(broken).toMatchObject({ status: 502, error: { type: 'error', error: { type: 'api_error' } } });
  });

  it('404 not_found_error for an unknown model; 400 invalid_request_error naming a missing field', async () => {
    await expect(sdk().messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const bad = await fetch(`${root}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': t.keys.agent }, body: JSON.stringify({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    // A field of the wrong type is not reported as missing.
    for (const [body, message] of [
      [{ model: 'claude-sonnet-4-6', max_tokens: 'ten', messages: [{ role: 'user', content: 'x' }] }, 'max_tokens: Input should be a valid number'],
      [{ model: 'claude-sonnet-4-6', max_tokens: 5, messages: 'x' }, 'messages: Input should be a valid list'],
    ] as const) {
      const wrong = await fetch(`${root}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': t.keys.agent }, body: JSON.stringify(body) });
      expect(wrong.status).toBe(400);
      expect(await wrong.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message } });
    }
  });
});

describe('models and unserved paths', () => {
  it("GET /v1/models answers in Anthropic's list shape when the request carries anthropic-version", async () => {
    const page = await sdk().models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toContain('claude-sonnet-4-6');
    expect(page.data[0]).toMatchObject({ type: 'model', display_name: expect.any(String), created_at: expect.any(String) });
    const openaiShape = (await (await fetch(`${t.baseUrl}/models`, { headers: { authorization: `Bearer ${t.keys.agent}` } })).json()) as { object: string };
    expect(openaiShape.object).toBe('list');
  });

  it('an unserved path is logged and answered in the envelope the client reads, naming what is served', async () => {
    const anth = await fetch(`${root}/v1/complete`, { method: 'POST', headers: { 'x-api-key': t.keys.agent, 'anthropic-version': '2023-06-01' }, body: '{}' });
    expect(anth.status).toBe(404);
    const a = (await anth.json()) as { type: string; error: { type: string; message: string } };
    expect(a).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(a.error.message).toContain('/v1/messages');
    const row = await auditRow(t, anth.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 404, endpoint: 'POST /v1/complete', keyName: 'agent' });

    const oai = await fetch(`${t.baseUrl}/responses-nope`, { method: 'POST', headers: { authorization: `Bearer ${t.keys.agent}` }, body: '{}' });
    expect(oai.status).toBe(404);
    const o = (await oai.json()) as { error: { type: string; message: string } };
    expect(o.error.type).toBe('invalid_request_error');
    expect(o.error.message).toContain('/v1/chat/completions');
    expect(o.error.message).not.toContain('not under');
  });
});

describe('failover between a pass-through and a translated provider', () => {
  it('an Anthropic provider failing before the first byte hands the call to an OpenAI one, stream and not', async () => {
    const a = await startAnthropicUpstream({ models: ['shared-model'] });
    const o = await startOpenAIUpstream({ models: ['shared-model'] });
    const g = await startTestGateway({
      providers: [
        { name: 'first-claude', type: 'anthropic', baseUrl: a.url, models: ['shared-model'], priority: 1, secret: 'a-secret' },
        { name: 'then-openai', type: 'openai', baseUrl: o.url, models: ['shared-model'], priority: 2, secret: 'o-secret' },
      ],
    });
    try {
      a.setDefaultFault({ kind: 'status', status: 529 });
      const client = new Anthropic({ apiKey: g.key, baseURL: g.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
      const { data, response } = await client.messages.create({ model: 'shared-model', max_tokens: 20, messages: [{ role: 'user', content: 'still there?' }] }).withResponse();
      expect(data.content).toEqual([{ type: 'text', text: 'Echo: still there?' }]);
      expect(response.headers.get('x-gateway-provider')).toBe('then-openai');
      expect(Number(response.headers.get('x-gateway-attempts'))).toBeGreaterThanOrEqual(2);
      const streamed = await client.messages.stream({ model: 'shared-model', max_tokens: 20, messages: [{ role: 'user', content: 'and streamed?' }] }).finalMessage();
      expect(streamed.content).toEqual([{ type: 'text', text: 'Echo: and streamed?' }]);
      expect(a.requests.length).toBeGreaterThanOrEqual(2);
      const row = await auditRow(g, response.headers.get('x-request-id'));
      expect(row.attemptList.map((x) => x.provider)).toContain('first-claude');
      expect(row.provider).toBe('then-openai');
    } finally {
      await g.close();
      await Promise.all([a.close(), o.close()]);
    }
  });
});

describe('OpenAI-format requests to an Anthropic provider', () => {
  it('keep cache_control on content parts (system included) and forward the client\'s anthropic-beta', async () => {
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.keys.agent}`, 'anthropic-beta': 'prompt-caching-scope-2026-01-05' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 30,
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'A long, stable system prompt.', cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: [{ type: 'text', text: 'a big document', cache_control: { type: 'ephemeral', ttl: '1h' } }, { type: 'text', text: 'the question' }] },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const sent = claude.requests.at(-1)!;
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-scope-2026-01-05');
    const body = sent.body as { system: unknown; messages: Array<{ content: unknown }> };
    expect(body.system).toEqual([{ type: 'text', text: 'A long, stable system prompt.', cache_control: { type: 'ephemeral' } }]);
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'a big document', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'the question' },
    ]);
  });

  it("tool_choice allowed_tools: only the allowed tools go to Anthropic, mode required -> any, auto -> auto (chat and Responses)", async () => {
    const oai = new OpenAI({ apiKey: t.keys.agent, baseURL: t.baseUrl, maxRetries: 0 });
    const fn = (name: string) => ({ type: 'function' as const, function: { name, description: name, parameters: { type: 'object', properties: { city: { type: 'string' } } } } });
    const tools = [fn('get_weather'), fn('get_time'), fn('get_news')];
    const allowed = (mode: 'auto' | 'required') => ({ type: 'allowed_tools', allowed_tools: { mode, tools: [{ type: 'function', function: { name: 'get_time' } }, { type: 'function', function: { name: 'get_news' } }] } });
    const required = await oai.chat.completions.create({ model: 'claude-sonnet-4-6', max_tokens: 30, messages: [{ role: 'user', content: 'what time?' }], tools, tool_choice: allowed('required') as never });
    let sent = lastBody(claude) as { tools: Array<{ name: string }>; tool_choice: unknown };
    expect(sent.tools.map((x) => x.name)).toEqual(['get_time', 'get_news']);
    expect(sent.tool_choice).toEqual({ type: 'any' });
    // The fake calls the first tool it is offered: get_weather was never offered.
    expect(required.choices[0].message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_time' } });
    await oai.chat.completions.create({ model: 'claude-sonnet-4-6', max_tokens: 30, messages: [{ role: 'user', content: 'what time?' }], tools, tool_choice: allowed('auto') as never });
    sent = lastBody(claude) as typeof sent;
    expect(sent.tools.map((x) => x.name)).toEqual(['get_time', 'get_news']);
    expect(sent.tool_choice).toEqual({ type: 'auto' });

    const flat = tools.map((x) => ({ type: 'function' as const, name: x.function.name, parameters: x.function.parameters, strict: false }));
    await oai.responses.create({ model: 'claude-sonnet-4-6', input: 'what time?', tools: flat, tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_news' }] } });
    sent = lastBody(claude) as typeof sent;
    expect(sent.tools.map((x) => x.name)).toEqual(['get_news']);
    expect(sent.tool_choice).toEqual({ type: 'any' });

    const bad = await oai.chat.completions
      .create({ model: 'claude-sonnet-4-6', max_tokens: 30, messages: [{ role: 'user', content: 'x' }], tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'nope' } }] } } as never })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('tool_choice.allowed_tools.tools');
  });
});
