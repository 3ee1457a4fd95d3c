import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from './openai-upstream.ts';
import type { FakeOptions, FakeUpstream } from './fault.ts';
import { fakeEmbedding } from './scenario.ts';

// Proves the fake is faithful by driving it with the official openai SDK: if the SDK (and its stream
// helper, which validates roles, finish reasons and tool-call deltas) is happy, the gateway can trust it.

let fake: FakeUpstream | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(options?: Partial<FakeOptions>, clientOptions: { timeout?: number; logLevel?: 'off' } = {}) {
  fake = await startOpenAIUpstream(options);
  const client = new OpenAI({ apiKey: 'sk-fake', baseURL: fake.url, maxRetries: 0, ...clientOptions });
  return { fake, client };
}

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

describe('openai fake: chat', () => {
  it('answers a non-stream chat with the echo reply and hand-computable usage', async () => {
    const { fake, client } = await setup();
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello there world' }],
    });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.choices[0].message).toMatchObject({ role: 'assistant', content: 'Echo: hello there world', refusal: null });
    expect(res.choices[0].finish_reason).toBe('stop');
    // prompt = 3 words + 3; completion = "Echo: hello there world" = 4 words
    expect(res.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect(res._request_id).toMatch(/^req_/);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', aborted: false });
    expect(fake.requests[0].headers.authorization).toBe('Bearer sk-fake');
    expect(fake.requests[0].body).toMatchObject({ model: 'gpt-4o-mini' });
  });

  it('applies system prompt, JSON mode, max_tokens, cached and reasoning knobs', async () => {
    const { fake, client } = await setup({ cachedTokens: 5, reasoningTokens: 7 });
    const sys = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [
        { role: 'developer', content: 'You are a very terse assistant.' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: 'you' }] },
      ],
    });
    expect(sys.choices[0].message.content).toBe('[sys:You are a very terse] Echo: hi you');
    // prompt = (6 + 3) + (2 + 3) + 5 cached; completion = 8 words + 7 reasoning
    expect(sys.usage).toMatchObject({
      prompt_tokens: 19,
      completion_tokens: 15,
      prompt_tokens_details: { cached_tokens: 5 },
      completion_tokens_details: { reasoning_tokens: 7 },
    });

    const json = await client.chat.completions.create({
      model: 'gpt-4o',
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: 'make json' }],
    });
    expect(JSON.parse(json.choices[0].message.content!)).toEqual({ echo: 'make json' });

    const short = await client.chat.completions.create({
      model: 'gpt-4o',
      max_completion_tokens: 2,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(short.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'Echo: one' } });
    expect(fake.requests).toHaveLength(3);
  });

  it('streams text: role first, one id and created, finish_reason, no usage unless asked', async () => {
    const { fake, client } = await setup();
    const chunks = await collect(
      await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'a b c' }] }),
    );
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(new Set(chunks.map((c) => c.created)).size).toBe(1);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Echo: a b c');
    expect(chunks.length).toBe(1 + 4 + 1); // role, one chunk per word, finish
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);

    const withUsage = await collect(
      await client.chat.completions.create({
        model: 'gpt-4o',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'a b c' }],
      }),
    );
    const last = withUsage.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect(withUsage.slice(0, -1).every((c) => c.usage === undefined)).toBe(true);
    expect(fake.requests[1].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('reproduces the usage quirks of compatible servers', async () => {
    const { fake, client } = await setup({ usageOnEveryChunk: true });
    const req = {
      model: 'gpt-4o',
      stream: true as const,
      stream_options: { include_usage: true },
      messages: [{ role: 'user' as const, content: 'x' }],
    };
    const every = await collect(await client.chat.completions.create(req));
    expect(every.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(every.at(-1)!.usage).toMatchObject({ total_tokens: 6 });

    fake.options.usageOnEveryChunk = false;
    fake.options.usageOnFinishChunk = true;
    const onFinish = await collect(await client.chat.completions.create(req));
    expect(onFinish.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(onFinish.at(-1)!.usage).toMatchObject({ total_tokens: 6 });

    fake.options.rejectStreamOptions = true;
    await expect(client.chat.completions.create(req)).rejects.toMatchObject({ status: 400, param: 'stream_options' });
    const { stream_options: _, ...plain } = req;
    // role, "Echo: ", "x", finish
    await expect(collect(await client.chat.completions.create(plain))).resolves.toHaveLength(4);
  });

  it('stream() helper accumulates text and reports no tool calls', async () => {
    const { client } = await setup();
    const stream = client.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi helper' }] });
    const deltas: string[] = [];
    stream.on('content', (d) => deltas.push(d));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('Echo: hi helper');
    expect(deltas.join('')).toBe('Echo: hi helper');
  });

  it('tool calls: non-stream arguments string, stream helper assembles the call', async () => {
    const { fake, client } = await setup();
    const messages = [{ role: 'user' as const, content: 'weather?' }];
    const res = await client.chat.completions.create({ model: 'gpt-4o', tools: [weatherTool], messages });
    expect(res.choices[0].finish_reason).toBe('tool_calls');
    const call = res.choices[0].message.tool_calls![0];
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });

    const stream = client.chat.completions.stream({ model: 'gpt-4o', tools: [weatherTool], messages });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0].message.tool_calls?.[0];
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    if (streamed?.type !== 'function') throw new Error('expected a streamed function call');
    expect(streamed).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(streamed.id).toMatch(/^call_/);

    // Raw deltas: id/type/name only in the first, then 3 argument fragments.
    const chunks = await collect(await client.chat.completions.create({ model: 'gpt-4o', stream: true, tools: [weatherTool], messages }));
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(toolDeltas.slice(1)).toHaveLength(3);
    expect(toolDeltas.slice(1).every((d) => d.id === undefined && d.function?.name === undefined)).toBe(true);

    const answer = await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [weatherTool],
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: [{ id: streamed.id, type: 'function', function: streamed.function }] },
        { role: 'tool', tool_call_id: streamed.id, content: '21C and sunny' },
      ],
    });
    expect(answer.choices[0].message.content).toBe('Tool said: 21C and sunny');
    expect(fake.requests).toHaveLength(4);
  });
});

describe('openai fake: models and embeddings', () => {
  it('lists and retrieves models, 404 for unknown, ids with a slash', async () => {
    const { client } = await setup({ models: ['gpt-4o', 'org/model-x'] });
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toEqual(['gpt-4o', 'org/model-x']);
    expect(page.data[0]).toMatchObject({ object: 'model', owned_by: 'fake-openai' });
    expect((await client.models.retrieve('org/model-x')).id).toBe('org/model-x');
    await expect(client.models.retrieve('nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('embeddings: SDK default base64 decodes to the float vectors; dimensions honoured', async () => {
    const { fake, client } = await setup();
    const b64 = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha beta', 'gamma'] });
    expect(fake.requests[0].body).toMatchObject({ encoding_format: 'base64' });
    expect(b64.data.map((d) => d.index)).toEqual([0, 1]);
    expect(Array.from(b64.data[0].embedding)).toEqual(fakeEmbedding('alpha beta'));
    expect(b64.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });

    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'alpha beta',
      encoding_format: 'float',
      dimensions: 16,
    });
    expect(floats.data[0].embedding).toHaveLength(16);
    expect(floats.data[0].embedding).toEqual(fakeEmbedding('alpha beta', 16));
    const norm = Math.hypot(...floats.data[0].embedding);
    expect(norm).toBeCloseTo(1, 5);
  });
});

describe('openai fake: faults', () => {
  it('status faults map to the SDK error classes, with the OpenAI error body', async () => {
    const { fake, client } = await setup();
    const call = () => client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    fake.queueFault(
      { kind: 'status', status: 429 },
      { kind: 'status', status: 401 },
      { kind: 'status', status: 500 },
      { kind: 'status', status: 400, body: { error: { message: 'custom', type: 't', param: 'p', code: 'c' } } },
    );
    const rate = await call().catch((e: unknown) => e);
    expect(rate).toBeInstanceOf(OpenAI.RateLimitError);
    expect(rate).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect((rate as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('1');
    await expect(call()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(call()).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    await expect(call()).rejects.toMatchObject({ status: 400, message: '400 custom', param: 'p', code: 'c' });
    // The queue is empty again: normal behaviour.
    await expect(call()).resolves.toMatchObject({ object: 'chat.completion' });
  });

  it('default fault applies when the queue is empty; requireKey gives 401', async () => {
    const { fake, client } = await setup({ requireKey: 'sk-right' });
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const good = new OpenAI({ apiKey: 'sk-right', baseURL: fake.url, maxRetries: 0 });
    fake.setDefaultFault({ kind: 'status', status: 503 });
    await expect(good.models.list()).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    await expect(good.models.list()).rejects.toMatchObject({ status: 503 });
    fake.setDefaultFault(null);
    await expect(good.models.list()).resolves.toBeDefined();
  });

  it('malformed: the SDK throws on a non-JSON body and on garbage SSE data', async () => {
    // The SDK logs the unparseable chunk before throwing; keep the test output clean.
    const { fake, client } = await setup({}, { logLevel: 'off' });
    fake.queueFault({ kind: 'malformed' }, { kind: 'malformed' });
    await expect(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow();
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] });
    await expect(collect(stream)).rejects.toThrow();
  });

  it('reset and reset-after-chunks: connection error, then a stream that breaks mid-way', async () => {
    const { fake, client } = await setup();
    fake.queueFault({ kind: 'reset' });
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.APIConnectionError);

    fake.queueFault({ kind: 'reset-after-chunks', chunks: 2 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'a b c d' }] });
    const seen: ChatCompletionChunk[] = [];
    await expect(
      (async () => {
        for await (const c of stream) seen.push(c);
      })(),
    ).rejects.toThrow();
    expect(seen).toHaveLength(2);

    fake.queueFault({ kind: 'reset-after-chunks', chunks: 1 });
    await expect(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow();
    await fake.waitForRequests(3);
    // The fake dropped these itself: not client aborts.
    expect(fake.requests.map((r) => r.aborted)).toEqual([false, false, false]);
  });

  it('hang: the SDK times out, and the fake records the client hanging up', async () => {
    const { fake, client } = await setup({}, { timeout: 150 });
    fake.queueFault({ kind: 'hang' });
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    await fake.waitForRequests(1);
    expect(fake.requests[0]).toMatchObject({ finished: true, aborted: true });
  });

  it('close() ends a hanging request at once instead of leaving it open', async () => {
    const { fake, client } = await setup();
    fake.setDefaultFault({ kind: 'hang' });
    const pending = client.models.list().then(
      () => 'answered',
      (e: unknown) => e,
    );
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const t = Date.now();
    await fake.close();
    expect(await pending).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(Date.now() - t).toBeLessThan(1_000);
    // The fake hung up, not the client.
    expect(fake.requests[0]).toMatchObject({ finished: true, aborted: false });
  });

  it('delay and slow-stream slow things down but still answer', async () => {
    const { fake, client } = await setup();
    fake.queueFault({ kind: 'delay', ms: 80 }, { kind: 'slow-stream', gapMs: 30 });
    let t = Date.now();
    await client.models.list();
    expect(Date.now() - t).toBeGreaterThanOrEqual(75);
    t = Date.now();
    const chunks = await collect(
      await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'a b' }] }),
    );
    expect(chunks).toHaveLength(5);
    expect(Date.now() - t).toBeGreaterThanOrEqual(4 * 30 - 10); // 5 chunks + [DONE] → 5 gaps; allow timer slack
  });

  it('records a client abort mid-stream as aborted', async () => {
    const { fake, client } = await setup();
    fake.queueFault({ kind: 'slow-stream', gapMs: 50 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four five' }],
    });
    for await (const chunk of stream) {
      expect(chunk.choices[0].delta.role).toBe('assistant');
      stream.controller.abort();
      break;
    }
    await fake.waitForRequests(1);
    expect(fake.requests[0]).toMatchObject({ aborted: true, finished: true });
  });
});
