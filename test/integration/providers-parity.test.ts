/**
 * Parity across the three native adapters: the same conversation, sent through the gateway with the
 * official `openai` SDK, must give the same observable result whether the upstream is OpenAI,
 * Anthropic (Messages API) or Gemini (generateContent). The fakes share one deterministic "model"
 * (test/fakes/scenario.ts), so text, finish_reason, tool calls and token counts are comparable.
 *
 * Every stream is read through `client.chat.completions.stream()`, whose accumulator throws on a
 * missing role, tool-call type or finish_reason; the raw chunks are captured from its `chunk` event.
 */
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

type Obj = Record<string, unknown>;
type Kind = 'openai' | 'anthropic' | 'gemini';

const SECRETS: Record<Kind, string> = {
  openai: 'sk-parity-openai-0123456789abcdef',
  anthropic: 'test-ant-parity-0123456789abcdef',
  gemini: 'AIzaParityGemini0123456789abcdef',
};
const MODELS: Record<Kind, string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' };
const KINDS: Kind[] = ['openai', 'anthropic', 'gemini'];

const ups = {} as Record<Kind, FakeUpstream>;
let t: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  ups.openai = await startOpenAIUpstream({ models: [MODELS.openai], requireKey: SECRETS.openai });
  ups.anthropic = await startAnthropicUpstream({ models: [MODELS.anthropic], requireKey: SECRETS.anthropic });
  ups.gemini = await startGeminiUpstream({ models: [MODELS.gemini], requireKey: SECRETS.gemini });
  t = await startTestGateway({
    providers: KINDS.map((k) => ({ name: `p-${k}`, type: k, baseUrl: ups[k].url, secret: SECRETS[k], models: [MODELS[k]] })),
  });
  client = t.client();
});
afterAll(async () => {
  await t?.close();
  await Promise.all(KINDS.map((k) => ups[k]?.close()));
});
beforeEach(() => {
  for (const k of KINDS) {
    ups[k].options.cachedTokens = undefined;
    ups[k].options.cacheWriteTokens = undefined;
    ups[k].options.reasoningTokens = undefined;
    ups[k].setDefaultFault(null);
  }
});

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

interface Observed {
  content: string | null;
  finish: string | null;
  toolCalls: Array<{ name: string; arguments: unknown }>;
  usage: { prompt: number; completion: number; total: number; cached: number } | null;
}

function observeUsage(u: unknown): Observed['usage'] {
  if (!u || typeof u !== 'object') return null;
  const x = u as Obj;
  const details = (x.prompt_tokens_details ?? {}) as Obj;
  return { prompt: Number(x.prompt_tokens), completion: Number(x.completion_tokens), total: Number(x.total_tokens), cached: Number(details.cached_tokens ?? 0) };
}

function observe(c: ChatCompletion, usage: unknown = c.usage): Observed {
  const choice = c.choices[0];
  const calls = (choice.message.tool_calls ?? []).map((tc) => {
    if (tc.type !== 'function') throw new Error(`unexpected tool call type ${tc.type}`);
    return { name: tc.function.name, arguments: JSON.parse(tc.function.arguments) as unknown };
  });
  // An empty streamed content and null mean the same thing to a client: "no text".
  const content = choice.message.content === '' ? null : choice.message.content;
  return { content, finish: choice.finish_reason, toolCalls: calls, usage: observeUsage(usage) };
}

type Params = Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'model' | 'stream'>;

async function callNonStream(kind: Kind, params: Params): Promise<{ completion: ChatCompletion; observed: Observed; headers: Headers }> {
  const { data, response } = await client.chat.completions.create({ ...params, model: MODELS[kind] }).withResponse();
  expect(response.headers.get('x-gateway-provider')).toBe(`p-${kind}`);
  expect(data.object).toBe('chat.completion');
  expect(data.choices).toHaveLength(1);
  expect(data.choices[0].message.role).toBe('assistant');
  return { completion: data, observed: observe(data), headers: response.headers };
}

/** Streams through the SDK helper (which validates the stream) and returns what it accumulated and the raw chunks. */
async function callStream(kind: Kind, params: Params): Promise<{ completion: ChatCompletion; observed: Observed; chunks: ChatCompletionChunk[] }> {
  const chunks: ChatCompletionChunk[] = [];
  const runner = client.chat.completions.stream({ ...params, model: MODELS[kind], stream_options: { include_usage: true } });
  runner.on('chunk', (c) => chunks.push(c));
  const completion = await runner.finalChatCompletion();
  checkStreamShape(chunks);
  const usageChunk = chunks.at(-1)!;
  return { completion, observed: observe(completion, usageChunk.usage), chunks };
}

/** What every chat stream must look like, whatever the upstream (protocol.md §2.3 and §0.6). */
function checkStreamShape(chunks: ChatCompletionChunk[]): void {
  expect(chunks.length).toBeGreaterThan(2);
  expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  expect(new Set(chunks.map((c) => c.created)).size).toBe(1);
  expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
  expect(chunks[0].choices[0].delta.role).toBe('assistant');
  // Only the first delta carries the role.
  expect(chunks.slice(1).filter((c) => c.choices[0]?.delta?.role !== undefined)).toHaveLength(0);
  const finishes = chunks.filter((c) => c.choices[0]?.finish_reason);
  expect(finishes).toHaveLength(1);
  // Usage only on the last chunk, which has no choices (the client asked for it).
  const last = chunks.at(-1)!;
  expect(last.choices).toEqual([]);
  expect(last.usage).toBeTruthy();
  expect(typeof (last.usage as unknown as Obj).cost).toBe('number');
  expect(chunks.slice(0, -1).filter((c) => c.usage)).toHaveLength(0);
  // Tool-call deltas: integer index; id, type and name once per index (the helpers concatenate repeats).
  const seen = new Map<number, number>();
  for (const c of chunks) {
    for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
      expect(Number.isInteger(tc.index)).toBe(true);
      const n = seen.get(tc.index) ?? 0;
      if (n === 0) {
        expect(tc.id).toBeTruthy();
        expect(tc.type).toBe('function');
        expect(tc.function?.name).toBeTruthy();
      } else {
        expect(tc.id).toBeUndefined();
        expect(tc.type).toBeUndefined();
        expect(tc.function?.name).toBeUndefined();
      }
      seen.set(tc.index, n + 1);
    }
  }
}

/** Runs the same call against all three upstreams, checks each against `expected`, and returns the results. */
async function parity(mode: 'stream' | 'non-stream', params: Params, expected: Observed) {
  const out = {} as Record<Kind, { completion: ChatCompletion; observed: Observed }>;
  for (const k of KINDS) {
    out[k] = mode === 'stream' ? await callStream(k, params) : await callNonStream(k, params);
    expect(out[k].observed, `${k} (${mode})`).toEqual(expected);
  }
  return out;
}

const MODES = ['non-stream', 'stream'] as const;
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe.each(MODES)('parity (%s)', (mode) => {
  it('plain chat', async () => {
    // prompt = (3 words + 3); completion = "Echo: hello parity world" = 4 words
    await parity(mode, { messages: [{ role: 'user', content: 'hello parity world' }] }, {
      content: 'Echo: hello parity world',
      finish: 'stop',
      toolCalls: [],
      usage: { prompt: 6, completion: 4, total: 10, cached: 0 },
    });
  });

  it('a system prompt', async () => {
    // prompt = system (3 + 3) + user (1 + 3); completion = "[sys:You are terse.] Echo: hi" = 5 words
    await parity(mode, { messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'hi' }] }, {
      content: '[sys:You are terse.] Echo: hi',
      finish: 'stop',
      toolCalls: [],
      usage: { prompt: 10, completion: 5, total: 15, cached: 0 },
    });
  });

  it('multi-turn', async () => {
    // prompt = 3 messages × (2 words + 3); completion = "Echo: second question" = 3 words
    await parity(
      mode,
      {
        messages: [
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: 'second question' },
        ],
      },
      { content: 'Echo: second question', finish: 'stop', toolCalls: [], usage: { prompt: 15, completion: 3, total: 18, cached: 0 } },
    );
  });

  it('an image in the content', async () => {
    // The image part reaches each upstream in its own shape (see "request translation"); the text is what the fakes echo.
    await parity(
      mode,
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'describe' }, { type: 'image_url', image_url: { url: PNG } }] }] },
      { content: 'Echo: describe', finish: 'stop', toolCalls: [], usage: { prompt: 4, completion: 2, total: 6, cached: 0 } },
    );
  });

  it('a two-step tool call', async () => {
    const first: ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    // step 1: prompt = 6 + 3; completion = "get_weather {"city":"Paris"}" = 2 words
    const step1 = await parity(mode, { messages: first, tools: [weatherTool], tool_choice: 'auto' }, {
      content: null,
      finish: 'tool_calls',
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      usage: { prompt: 9, completion: 2, total: 11, cached: 0 },
    });
    for (const k of KINDS) {
      const msg = step1[k].completion.choices[0].message;
      const call = msg.tool_calls![0];
      expect(call.id, k).toBeTruthy();
      // The assistant message goes back as the SDK gave it, then the tool result for its id.
      const second: ChatCompletionMessageParam[] = [
        ...first,
        msg as ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
      ];
      // step 2: prompt = 9 + assistant (2 + 3) + tool (2 + 3); completion = "Tool said: sunny, 21C" = 4 words
      const r = mode === 'stream' ? await callStream(k, { messages: second, tools: [weatherTool] }) : await callNonStream(k, { messages: second, tools: [weatherTool] });
      expect(r.observed, k).toEqual({
        content: 'Tool said: sunny, 21C',
        finish: 'stop',
        toolCalls: [],
        usage: { prompt: 19, completion: 4, total: 23, cached: 0 },
      });
    }
    // Each upstream got the result in its own shape.
    const anth = ups.anthropic.requests.at(-1)!.body as Obj;
    const anthMsgs = anth.messages as Array<{ role: string; content: Array<Obj> }>;
    expect(anthMsgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(anthMsgs[1].content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    expect(anthMsgs[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: anthMsgs[1].content[0].id, content: 'sunny, 21C' });
    const gem = ups.gemini.requests.at(-1)!.body as Obj;
    const contents = gem.contents as Array<{ role: string; parts: Obj[] }>;
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(contents[1].parts[0]).toMatchObject({ functionCall: { name: 'get_weather', args: { city: 'Paris' } } });
    expect(contents[2].parts[0]).toEqual({ functionResponse: { name: 'get_weather', response: { content: 'sunny, 21C' } } });
  });

  it('JSON mode', async () => {
    const params: Params = { messages: [{ role: 'user', content: 'give json' }], response_format: { type: 'json_object' } };
    const out = {} as Record<Kind, Observed>;
    for (const k of KINDS) {
      const r = mode === 'stream' ? await callStream(k, params) : await callNonStream(k, params);
      out[k] = r.observed;
      expect(JSON.parse(r.observed.content ?? 'null'), k).toEqual({ echo: 'give json' });
      expect(r.observed.finish, k).toBe('stop');
      // '{"echo":"give json"}' is 2 whitespace-separated words
      expect(r.observed.usage?.completion, k).toBe(2);
    }
    // OpenAI and Gemini have a native JSON mode; Anthropic gets the contract as a system instruction,
    // whose words count as prompt tokens there.
    expect(out.openai.usage?.prompt).toBe(5);
    expect(out.gemini.usage?.prompt).toBe(5);
    expect(out.anthropic.usage!.prompt).toBeGreaterThan(5);
    expect((ups.gemini.requests.at(-1)!.body as { generationConfig: Obj }).generationConfig.responseMimeType).toBe('application/json');
    expect((ups.anthropic.requests.at(-1)!.body as { system: string }).system).toMatch(/JSON/);
  });

  it('max_tokens reached (length)', async () => {
    // "Echo: one two three four" cut to 2 words
    await parity(mode, { messages: [{ role: 'user', content: 'one two three four' }], max_tokens: 2 }, {
      content: 'Echo: one',
      finish: 'length',
      toolCalls: [],
      usage: { prompt: 7, completion: 2, total: 9, cached: 0 },
    });
  });

  it('usage with cached tokens (prompt_tokens includes them)', async () => {
    for (const k of KINDS) ups[k].options.cachedTokens = 1000;
    await parity(mode, { messages: [{ role: 'user', content: 'cache me' }] }, {
      content: 'Echo: cache me',
      finish: 'stop',
      toolCalls: [],
      usage: { prompt: 1005, completion: 3, total: 1008, cached: 1000 },
    });
  });
});

describe('stream without include_usage', () => {
  it.each(KINDS)('%s: no usage chunk and no usage field, still role first and one finish_reason', async (k) => {
    const s = await client.chat.completions.create({ model: MODELS[k], stream: true, messages: [{ role: 'user', content: 'quiet usage please' }] });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of s) chunks.push(c);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.some((c) => c.choices.length === 0)).toBe(false);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: quiet usage please');
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
  });
});

describe('raw SSE on the wire', () => {
  it.each(KINDS)('%s: unnamed `data:` events only, ending with [DONE] (which Gemini and Anthropic never send)', async (k) => {
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ model: MODELS[k], stream: true, messages: [{ role: 'user', content: 'raw wire' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text).not.toMatch(/^event:/m);
    const blocks = text.split('\n\n').filter((b) => b !== '');
    expect(blocks.every((b) => b.startsWith('data: '))).toBe(true);
    expect(blocks.at(-1)).toBe('data: [DONE]');
    expect(blocks.filter((b) => b === 'data: [DONE]')).toHaveLength(1);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  // Anthropic: message_start, content_block_start, ping, one text delta; the others: two events.
  const CUT: Record<Kind, number> = { openai: 2, anthropic: 4, gemini: 2 };
  it.each(KINDS)('%s: an upstream that dies mid-stream ends the stream with an error event and no [DONE]', async (k) => {
    ups[k].queueFault({ kind: 'reset-after-chunks', chunks: CUT[k] });
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS[k], stream: true, messages: [{ role: 'user', content: 'one two three four five' }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    const blocks = text.split('\n\n').filter((b) => b !== '');
    const last = JSON.parse(blocks.at(-1)!.slice('data: '.length)) as { error: Obj };
    expect(Object.keys(last.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(last.error.type).toBe('api_error');
    // Something was relayed before the error: the role chunk at least.
    expect(blocks.length).toBeGreaterThan(1);
    expect(JSON.parse(blocks[0].slice('data: '.length)).choices[0].delta.role).toBe('assistant');
  });
});

describe('request translation', () => {
  const rich: Params = {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: 'Use metric units.' },
      { role: 'user', content: [{ type: 'text', text: 'describe' }, { type: 'image_url', image_url: { url: PNG } }] },
      { role: 'assistant', content: 'It is a pixel.' },
      { role: 'user', content: 'and now?' },
    ],
    stop: ['END'],
    temperature: 0.5,
    tools: [weatherTool],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    user: 'end-user-1',
  };

  it('Anthropic: required headers, system, alternating turns, image block, tools, tool_choice, stop, max_tokens default', async () => {
    await client.chat.completions.create({ ...rich, model: MODELS.anthropic });
    const req = ups.anthropic.requests.at(-1)!;
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe(SECRETS.anthropic);
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.headers.authorization).toBeUndefined();
    const body = req.body as Obj;
    expect(body.model).toBe(MODELS.anthropic);
    expect(body.system).toBe('Be brief.\n\nUse metric units.');
    // No cap in the chat request: claude-sonnet-4-5's own output limit.
    expect(body.max_tokens).toBe(64_000);
    expect(body.stop_sequences).toEqual(['END']);
    expect(body.temperature).toBe(0.5);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(body.tools).toEqual([
      { name: 'get_weather', description: 'Current weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    ]);
    expect(body).not.toHaveProperty('user');
    const msgs = body.messages as Array<{ role: string; content: Obj[] }>;
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(msgs[0].content).toEqual([
      { type: 'text', text: 'describe' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.split(',')[1] } },
    ]);
  });

  it('Anthropic: tool_choice required → any, parallel_tool_calls false, max_completion_tokens', async () => {
    await client.chat.completions.create({
      model: MODELS.anthropic,
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weatherTool],
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_completion_tokens: 77,
    });
    const body = ups.anthropic.requests.at(-1)!.body as Obj;
    expect(body.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(body.max_tokens).toBe(77);
  });

  it('Gemini: API key header, systemInstruction, roles, inlineData, tools, toolConfig, stop, URL per mode', async () => {
    await client.chat.completions.create({ ...rich, model: MODELS.gemini });
    const req = ups.gemini.requests.at(-1)!;
    expect(req.path).toBe(`/v1beta/models/${MODELS.gemini}:generateContent`);
    expect(req.headers['x-goog-api-key']).toBe(SECRETS.gemini);
    expect(req.headers.authorization).toBeUndefined();
    const body = req.body as Obj;
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Use metric units.' }] });
    const contents = body.contents as Array<{ role: string; parts: Obj[] }>;
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(contents[0].parts).toEqual([{ text: 'describe' }, { inlineData: { mimeType: 'image/png', data: PNG.split(',')[1] } }]);
    expect(body.tools).toEqual([
      { functionDeclarations: [{ name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
    expect(body.generationConfig).toMatchObject({ stopSequences: ['END'], temperature: 0.5 });

    const s = await client.chat.completions.create({ model: MODELS.gemini, stream: true, messages: [{ role: 'user', content: 'x' }] });
    for await (const _ of s) void _;
    expect(ups.gemini.requests.at(-1)!.path).toBe(`/v1beta/models/${MODELS.gemini}:streamGenerateContent?alt=sse`);
  });

  it('Anthropic stream: sends stream:true and the same headers', async () => {
    const s = await client.chat.completions.create({ model: MODELS.anthropic, stream: true, messages: [{ role: 'user', content: 'x' }] });
    for await (const _ of s) void _;
    const req = ups.anthropic.requests.at(-1)!;
    expect((req.body as Obj).stream).toBe(true);
    expect(req.headers['x-api-key']).toBe(SECRETS.anthropic);
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
  });
});

describe('upstream errors become the OpenAI envelope', () => {
  const expectedMessage: Record<Kind, RegExp> = { openai: /Invalid request \(fake\)/, anthropic: /Fake upstream error 400/, gemini: /Fake upstream error 400/ };

  it.each(KINDS)('%s: a 400 goes back as a 400 invalid_request_error with the provider message', async (k) => {
    ups[k].queueFault({ kind: 'status', status: 400 });
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS[k], messages: [{ role: 'user', content: 'bad' }] }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: Obj };
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(body.error.type).toBe('invalid_request_error');
    expect(String(body.error.message)).toMatch(expectedMessage[k]);
  });

  it.each(KINDS)('%s: the provider rejecting its own key is a 502 naming the provider, never a 401', async (k) => {
    ups[k].queueFault({ kind: 'status', status: 401 });
    const err = await client.chat.completions.create({ model: MODELS[k], messages: [{ role: 'user', content: 'key?' }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502 });
    const e = err as { error: Obj };
    expect(e.error.type).toBe('api_error');
    expect(String(e.error.message)).toContain(`p-${k}`);
    // A success afterwards keeps the breaker closed for the other tests.
    await client.chat.completions.create({ model: MODELS[k], messages: [{ role: 'user', content: 'ok' }] });
  });

  it.each(KINDS)('%s: rate limited on every try is a 429 rate_limit_exceeded with retry-after', async (k) => {
    ups[k].setDefaultFault({ kind: 'status', status: 429 });
    const err = await client.chat.completions.create({ model: MODELS[k], messages: [{ role: 'user', content: 'slow down' }] }).catch((e: unknown) => e);
    ups[k].setDefaultFault(null);
    expect(err).toMatchObject({ status: 429 });
    const e = err as { error: Obj; headers: Headers };
    expect(e.error.type).toBe('rate_limit_exceeded');
    expect(e.headers.get('retry-after')).toBeTruthy();
  });

  it('Anthropic 529 overloaded is a provider failure (503 to the gateway), Gemini 503 likewise', async () => {
    for (const [k, status] of [['anthropic', 529], ['gemini', 503]] as const) {
      ups[k].setDefaultFault({ kind: 'status', status });
      const err = await client.chat.completions.create({ model: MODELS[k], messages: [{ role: 'user', content: 'busy?' }] }).catch((e: unknown) => e);
      ups[k].setDefaultFault(null);
      expect(err, k).toMatchObject({ status: 502 });
      expect(String((err as { error: Obj }).error.message), k).toMatch(/HTTP 503/);
      await client.chat.completions.create({ model: MODELS[k], messages: [{ role: 'user', content: 'ok' }] });
    }
  });
});
