/**
 * Chat completions through the real gateway with the official `openai` SDK: non-stream and stream
 * shapes, the stream helper on text and on a tool call, and request parameters forwarded unchanged
 * (except `user`, which is dropped). The fake upstream records what the gateway sent.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

const UPSTREAM_SECRET = 'sk-upstream-basic-0123456789abcdef';

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

let up: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini', 'gpt-4o', 'o4-mini'] });
  t = await startTestGateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: UPSTREAM_SECRET, models: ['gpt-4o-mini', 'gpt-4o', 'o4-mini'] }] });
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});
beforeEach(() => {
  up.options.usageOnEveryChunk = false;
  up.options.usageOnFinishChunk = false;
});

type JsonObject = Record<string, unknown>;
const lastBody = (): JsonObject => up.requests.at(-1)?.body as JsonObject;

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

describe('non-stream chat', () => {
  it('returns the upstream completion with usage, cost and gateway headers', async () => {
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there world' }] })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(data.object).toBe('chat.completion');
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0].message).toMatchObject({ role: 'assistant', content: 'Echo: hello there world' });
    expect(data.choices[0].finish_reason).toBe('stop');
    // prompt = 3 words + 3; completion = 4 words
    expect(data.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect(response.headers.get('x-gateway-provider')).toBe('oa');
    expect(response.headers.get('x-gateway-model')).toBe('gpt-4o-mini');
    expect(response.headers.get('x-gateway-attempts')).toBe('1');
    const id = response.headers.get('x-request-id');
    expect(id).toBeTruthy();
    expect((data as { _request_id?: string | null })._request_id).toBe(id);
    // The provider's key went upstream, never the client's.
    expect(up.requests.at(-1)?.headers.authorization).toBe(`Bearer ${UPSTREAM_SECRET}`);
    expect(lastBody().stream_options).toBeUndefined();
  });

  it('returns a tool call as the upstream made it', async () => {
    const r = await t.client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [weatherTool],
    });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    const call = r.choices[0].message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });
});

describe('stream chat', () => {
  it('streams content with role first, one id, a finish_reason, and no usage chunk unless asked', async () => {
    const stream = await t.client().chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one two three four' }] });
    const chunks = await collect(stream);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('Echo: one two three four');
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
    // Client did not ask: no usage chunk, no usage field anywhere.
    expect(chunks.some((c) => c.choices.length === 0)).toBe(false);
    expect(chunks.some((c) => c.usage)).toBe(false);
    // ... but the gateway asked the upstream for usage all the same.
    expect(lastBody().stream_options).toEqual({ include_usage: true });
    expect(lastBody().stream).toBe(true);
  });

  it('adds a usage chunk with cost (choices: []) last, when the client asks', async () => {
    const stream = await t.client().chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    const chunks = await collect(stream);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
    expect(typeof (last.usage as unknown as JsonObject).cost).toBe('number');
    expect(chunks.filter((c) => c.usage).length).toBe(1);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(lastBody().stream_options).toEqual({ include_usage: true });
  });

  it('the stream helper accumulates a text reply (finalChatCompletion)', async () => {
    const runner = t.client().chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream helper text' }] });
    let deltas = '';
    runner.on('content', (d) => {
      deltas += d;
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].message.role).toBe('assistant');
    expect(final.choices[0].message.content).toBe('Echo: stream helper text');
    expect(final.choices[0].finish_reason).toBe('stop');
    expect(deltas).toBe('Echo: stream helper text');
  });

  it('the stream helper accumulates a streamed tool call (finalChatCompletion)', async () => {
    const runner = t.client().chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [weatherTool],
    });
    const final = await runner.finalChatCompletion();
    const choice = final.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0];
    if (call.type !== 'function') throw new Error('expected a function tool call');
    expect(call.id).toMatch(/^call_/);
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });
});

describe('a body with two "model" keys', () => {
  it('goes upstream as the gateway parsed it (the model the allow-list and the price saw), never as written', async () => {
    const text = '{"model":"gpt-4o","messages":[{"role":"user","content":"which model?"}],"model":"gpt-4o-mini"}';
    const res = await fetch(`${t.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' }, body: text });
    expect(res.status).toBe(200);
    const raw = up.requests.at(-1)!.rawBody ?? '';
    expect(raw.match(/"model"/g)).toHaveLength(1);
    expect(JSON.parse(raw).model).toBe('gpt-4o-mini');
    expect(res.headers.get('x-gateway-model')).toBe('gpt-4o-mini');
  });
});

describe('parameters', () => {
  // A reasoning model: OpenAI (and the fake) refuse reasoning_effort on gpt-4o.
  const params = {
    temperature: 0.3,
    top_p: 0.9,
    tools: [weatherTool],
    tool_choice: { type: 'function' as const, function: { name: 'get_weather' } },
    parallel_tool_calls: false,
    response_format: { type: 'json_object' as const },
    seed: 42,
    stop: ['END', 'STOP'],
    max_tokens: 50,
    max_completion_tokens: 60,
    logit_bias: { '50256': -100 },
    n: 1,
    metadata: { project: 'gw-tests' },
    frequency_penalty: 0.1,
    presence_penalty: 0.2,
    logprobs: true,
    top_logprobs: 2,
    service_tier: 'auto' as const,
    store: false,
    reasoning_effort: 'low' as const,
  };

  it('forwards every parameter unchanged and drops `user` (non-stream)', async () => {
    await t.client().chat.completions.create({ model: 'o4-mini', messages: [{ role: 'user', content: 'params' }], user: 'end-user-42', ...params });
    const sent = lastBody();
    for (const [k, v] of Object.entries(params)) expect(sent[k], k).toEqual(v);
    expect(sent).not.toHaveProperty('user');
    expect(sent.model).toBe('o4-mini');
    expect(sent.messages).toEqual([{ role: 'user', content: 'params' }]);
  });

  it('forwards every parameter unchanged and drops `user` (stream)', async () => {
    const s = await t
      .client()
      .chat.completions.create({ model: 'o4-mini', stream: true, messages: [{ role: 'user', content: 'params' }], user: 'end-user-42', ...params });
    await collect(s);
    const sent = lastBody();
    for (const [k, v] of Object.entries(params)) expect(sent[k], k).toEqual(v);
    expect(sent).not.toHaveProperty('user');
    expect(sent.stream).toBe(true);
  });

  it('keeps the client\'s other stream_options and still asks for usage', async () => {
    const s = await t.client().chat.completions.create({
      model: 'o4-mini',
      stream: true,
      stream_options: { include_usage: false, include_obfuscation: false },
      messages: [{ role: 'user', content: 'opts' }],
    });
    const chunks = await collect(s);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(lastBody().stream_options).toEqual({ include_usage: true, include_obfuscation: false });
  });
});

describe('audit rows', () => {
  it('stores a large prompt as sent (whole under 64 KiB, cut over it), with the provider key and key-shaped text scrubbed', async () => {
    const keyShaped = `sk-live-${'FAKE'.repeat(5)}`; // built here: plainly fake, key-shaped
    const leak = `here is my key ${UPSTREAM_SECRET} and another ${keyShaped}, café ☕ `;
    const fits = `${leak}${'0123456789'.repeat(3000)}`; // ~30 KB: handed to the audit thread as bytes, kept whole
    const huge = `${leak}${'é-€-'.repeat(30_000)}`; // ~200 KB of UTF-8: cut at 64 KiB
    const a = await t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: fits }] }).withResponse();
    const b = await t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: huge }] }).withResponse();
    t.flush();
    const store = t.openStore();
    try {
      const whole = getCall(store.db, a.response.headers.get('x-request-id')!)?.requestBody ?? '';
      const sent = JSON.parse(whole) as { messages: { content: string }[] };
      expect(sent.messages[0].content).toBe(fits.replace(UPSTREAM_SECRET, '[redacted]').replace(keyShaped, '[redacted]'));
      const cut = getCall(store.db, b.response.headers.get('x-request-id')!)?.requestBody ?? '';
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(64 * 1024);
      expect(Buffer.byteLength(cut)).toBeGreaterThan(64 * 1024 - 100);
      expect(cut).toMatch(/é-€-…\[truncated \d+ bytes\]$|…\[truncated \d+ bytes\]$/);
      // The marker counts from the whole body, though only its first 64 KiB crossed to the audit thread: what is
      // kept (before the two secrets became `[redacted]`) and what was cut add up to the bytes the client sent.
      const marker = /…\[truncated (\d+) bytes\]$/.exec(cut);
      const keptBeforeScrub = Buffer.byteLength(cut.slice(0, marker?.index)) + UPSTREAM_SECRET.length + keyShaped.length - 2 * '[redacted]'.length;
      const sentBytes = Buffer.byteLength(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: huge }] }));
      expect(keptBeforeScrub + Number(marker?.[1])).toBe(sentBytes);
      expect(cut).toContain('here is my key [redacted] and another [redacted], café ☕');
      expect(cut).not.toContain('\uFFFD');
      for (const body of [whole, cut]) {
        expect(body).not.toContain(UPSTREAM_SECRET);
        expect(body).not.toContain('sk-live-');
      }
    } finally {
      store.close();
    }
  });

  it('records a non-stream call and a stream call under their x-request-id', async () => {
    const a = await t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'audit me please' }] }).withResponse();
    // Codex names its conversation in a `session_id` header: the row keeps it, as Claude Code's session.
    const sa = await t
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'audit me please' }] }, { headers: { session_id: 'codex-thread-7' } })
      .withResponse();
    await collect(sa.data);
    t.flush();
    const store = t.openStore();
    try {
      const row = getCall(store.db, a.response.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        status: 200,
        errorType: null,
        provider: 'oa',
        model: 'gpt-4o-mini',
        modelRequested: 'gpt-4o-mini',
        inputTokens: 6,
        outputTokens: 4,
        stream: false,
        attempts: 1,
        pricing: 'priced',
        keyName: 'test',
      });
      expect(row!.costUsd).toBeGreaterThan(0);
      expect(row!.priceVersion).toBeTruthy();
      expect(row!.attemptList).toEqual([expect.objectContaining({ provider: 'oa', model: 'gpt-4o-mini', status: 200, error: null })]);
      // Bodies are stored, with the upstream secret nowhere.
      expect(row!.requestBody).toContain('audit me please');
      expect(row!.responseBody).toContain('Echo: audit me please');

      const srow = getCall(store.db, sa.response.headers.get('x-request-id')!);
      expect(srow).toMatchObject({ status: 200, stream: true, provider: 'oa', inputTokens: 6, outputTokens: 4, pricing: 'priced', attempts: 1, sessionId: 'codex-thread-7' });
      expect(srow!.ttftMs).not.toBeNull();
    } finally {
      store.close();
    }
  });
});
