import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startAnthropicUpstream } from './anthropic-upstream.ts';
import type { FakeOptions, FakeUpstream } from './fault.ts';

// Proves the fake speaks the Messages API faithfully by driving it with the official @anthropic-ai/sdk,
// whose MessageStream accumulator rejects out-of-order or malformed events.

let fake: FakeUpstream | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(options?: Partial<FakeOptions>) {
  fake = await startAnthropicUpstream(options);
  const client = new Anthropic({ apiKey: 'sk-ant-fake', baseURL: fake.url, maxRetries: 0 });
  return { fake, client };
}

const weatherTool = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object' as const, properties: {} } };
// Not one the SDK flags as deprecated: it warns on stderr for claude-sonnet-4-5.
const MODEL = 'claude-sonnet-4-6';

describe('anthropic fake', () => {
  it('answers a non-stream message and records auth and version headers', async () => {
    const { fake, client } = await setup();
    const msg = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      system: 'Be brief and kind please',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn' });
    expect(msg.content).toEqual([{ type: 'text', text: '[sys:Be brief and kind pl] Echo: hello there' }]);
    // input = (5 + 3) system + (2 + 3) user; output = 8 words
    expect(msg.usage).toMatchObject({ input_tokens: 13, output_tokens: 8, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    const rec = fake.requests[0];
    expect(rec).toMatchObject({ method: 'POST', path: '/v1/messages' });
    const auth = rec.headers['x-api-key'] ?? rec.headers.authorization;
    expect(String(auth)).toContain('sk-ant-fake');
    expect(rec.headers['anthropic-version']).toEqual(expect.any(String));
  });

  it('reports cache fields with input_tokens excluding them, and thinking inside output_tokens', async () => {
    const { client } = await setup({ cachedTokens: 100, cacheWriteTokens: 20, reasoningTokens: 9 });
    const msg = await client.messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'a b' }] });
    expect(msg.usage).toMatchObject({
      input_tokens: 5,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
      output_tokens: 3 + 9,
    });
  });

  it('JSON when the system prompt asks for it; max_tokens truncates', async () => {
    const { client } = await setup();
    const json = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      system: 'Reply in JSON only.',
      messages: [{ role: 'user', content: 'ping me' }],
    });
    const block = json.content[0];
    expect(block.type === 'text' && JSON.parse(block.text)).toEqual({ echo: 'ping me' });

    const short = await client.messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: 'w x y z' }] });
    expect(short.stop_reason).toBe('max_tokens');
    expect(short.content).toEqual([{ type: 'text', text: 'Echo: w' }]);
  });

  it('streams with messages.stream() and finalMessage()', async () => {
    const { fake, client } = await setup({ cachedTokens: 4 });
    const stream = client.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'stream this now' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(texts).toEqual(['Echo: ', 'stream ', 'this ', 'now']);
    expect(final.content).toEqual([{ type: 'text', text: 'Echo: stream this now' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 6, output_tokens: 4, cache_read_input_tokens: 4 });
    expect(fake.requests[0].body).toMatchObject({ stream: true });
  });

  it('emits the named events in protocol order, ping included', async () => {
    const { client } = await setup();
    const stream = await client.messages.create({ model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'q' }] });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    // The SDK drops ping; everything else arrives in order.
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('tool_use: non-stream input object, stream accumulates input_json_delta fragments', async () => {
    const { client } = await setup();
    const params = { model: MODEL, max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user' as const, content: 'weather?' }] };
    const msg = await client.messages.create(params);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });

    const stream = client.messages.stream(params);
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const final = await stream.finalMessage();
    expect(partials.length).toBeGreaterThanOrEqual(2);
    expect(partials.join('')).toBe('{"city":"Paris"}');
    const toolUse = final.content[0];
    expect(toolUse.type).toBe('tool_use');
    if (toolUse.type !== 'tool_use') throw new Error('expected tool_use');
    expect(toolUse.input).toEqual({ city: 'Paris' });
    expect(toolUse.id).toMatch(/^toolu_/);
    expect(final.stop_reason).toBe('tool_use');

    const answer = await client.messages.create({
      ...params,
      messages: [
        ...params.messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: toolUse.id, name: 'get_weather', input: toolUse.input }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18C cloudy' }] },
      ],
    });
    expect(answer.content).toEqual([{ type: 'text', text: 'Tool said: 18C cloudy' }]);
  });

  it('rejects what the real API rejects: missing max_tokens, non-alternating roles', async () => {
    const { fake, client } = await setup();
    const noMax = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(noMax.status).toBe(400);
    expect(noMax.headers.get('request-id')).toMatch(/^req_/);
    const body = (await noMax.json()) as { type: string; error: { type: string; message: string }; request_id: string };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    expect(body.request_id).toBe(noMax.headers.get('request-id'));

    const twoUsers = client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
    });
    await expect(twoUsers).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(
      client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'assistant', content: 'a' }] }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('maps status faults to the SDK error classes', async () => {
    const { fake, client } = await setup();
    const call = () => client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    fake.queueFault(
      { kind: 'status', status: 400 },
      { kind: 'status', status: 401 },
      { kind: 'status', status: 429 },
      { kind: 'status', status: 529 },
    );
    await expect(call()).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(call()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const limited = await call().catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).toBe('1');
    const overloaded = await call().catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError);
    expect(overloaded).toBeInstanceOf(Anthropic.OverloadedError);
    expect(overloaded).toMatchObject({ status: 529, error: { type: 'error', error: { type: 'overloaded_error' } } });
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);
  });

  it('requireKey accepts x-api-key or Bearer and 401s otherwise; models list', async () => {
    const { fake, client } = await setup({ requireKey: 'right', models: ['claude-a', 'claude-b'] });
    await expect(client.models.list()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const viaHeader = await fetch(`${fake.url}/v1/models`, { headers: { 'x-api-key': 'right' } });
    expect(viaHeader.status).toBe(200);
    const good = new Anthropic({ apiKey: 'right', baseURL: fake.url, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of good.models.list()) ids.push(m.id);
    expect(ids).toEqual(['claude-a', 'claude-b']);
  });

  it('a stream broken after some events makes finalMessage() reject', async () => {
    const { fake } = await setup();
    // The SDK logs the unparseable chunk before throwing; keep the test output clean.
    const client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0, logLevel: 'off' });
    fake.queueFault({ kind: 'reset-after-chunks', chunks: 3 }, { kind: 'malformed' });
    const params = { model: MODEL, max_tokens: 100, messages: [{ role: 'user' as const, content: 'a b c d' }] };
    await expect(client.messages.stream(params).finalMessage()).rejects.toThrow();
    await expect(client.messages.stream(params).finalMessage()).rejects.toThrow();
  });
});
