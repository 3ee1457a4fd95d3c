import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../core/errors.ts';
import { anthropicAdapter } from '../../core/providers/anthropic/index.ts';
import { toFinishReason } from '../../core/providers/anthropic/stop-reason.ts';
import type { CallContext, ChatRequest, ProviderSettings, SseEvent, StreamPiece } from '../../core/providers/types.ts';
import { providerSettings } from '../support/provider-settings.ts';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const NOW_S = Math.floor(NOW / 1000);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

const provider = (baseUrl = 'https://api.anthropic.com'): ProviderSettings => providerSettings({ name: 'claude', type: 'anthropic', baseUrl });

function ctx(over: Partial<CallContext> = {}): CallContext {
  return { provider: provider(), model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', stream: false, ...over };
}

type Obj = Record<string, unknown>;

function sent(body: Obj, c: CallContext = ctx()): Obj {
  const req = anthropicAdapter.chatRequest({ model: 'whatever', messages: [], ...body } as ChatRequest, c);
  return JSON.parse(req.body ?? 'null') as Obj;
}

const user = (content: unknown): Obj => ({ role: 'user', content });

describe('chatRequest: transport', () => {
  it.each([
    'https://api.anthropic.com',
    'https://api.anthropic.com/',
    'https://api.anthropic.com/v1',
    'https://api.anthropic.com/v1/',
  ])('posts to /v1/messages for base URL %s', (baseUrl) => {
    const req = anthropicAdapter.chatRequest(
      { model: 'x', messages: [user('hi')] },
      ctx({ provider: provider(baseUrl) }),
    );
    expect(req.method).toBe('POST');
    expect(req.url).toBe('https://api.anthropic.com/v1/messages');
  });

  it('keeps a proxy path prefix', () => {
    const req = anthropicAdapter.chatRequest({ model: 'x', messages: [user('hi')] }, ctx({ provider: provider('http://127.0.0.1:9000/anthropic/') }));
    expect(req.url).toBe('http://127.0.0.1:9000/anthropic/v1/messages');
  });

  it('sends the Anthropic auth and version headers', () => {
    const req = anthropicAdapter.chatRequest({ model: 'x', messages: [user('hi')] }, ctx());
    expect(req.headers).toEqual({
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    });
  });

  it('sends ctx.model, not body.model, and a minimal body', () => {
    expect(sent({ model: 'gpt-4o', messages: [user('hi')] })).toEqual({
      model: 'claude-sonnet-4-5',
      // No cap named: the model's own output limit, as OpenAI's "no max_tokens" means.
      max_tokens: 64_000,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
  });
});

describe('chatRequest: messages', () => {
  it('concatenates system and developer messages into top-level system', () => {
    const body = sent({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        user('hi'),
      ],
    });
    expect(body.system).toBe('You are terse.\n\nAnswer in French.');
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('maps text and image parts (data URL → base64, http URL → url)', () => {
    const body = sent({
      messages: [
        user([
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/AAAA', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ]),
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/AAAA' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
        ],
      },
    ]);
  });

  it('maps an inline PDF file part to a document block', () => {
    const body = sent({
      messages: [user([{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }])],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' }],
      },
    ]);
  });

  it('rejects content Anthropic cannot take with a 400', () => {
    const bad = [
      user([{ type: 'image_url', image_url: { url: 'ftp://example.com/x.png' } }]),
      user([{ type: 'image_url', image_url: { url: 'data:image/png,rawbytes' } }]),
      user([{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }]),
      user([{ type: 'file', file: { file_id: 'file-1' } }]),
      { role: 'tool', content: 'x' },
    ];
    for (const m of bad) {
      let err: unknown;
      try {
        sent({ messages: [m] });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).status).toBe(400);
    }
  });

  it('merges consecutive same-role turns so roles alternate', () => {
    const body = sent({
      messages: [
        user('one'),
        user([{ type: 'text', text: 'two' }]),
        { role: 'assistant', content: 'a' },
        { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
        user('three'),
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'user', content: [{ type: 'text', text: 'three' }] },
    ]);
  });

  it('drops empty text so no empty block or empty turn is sent', () => {
    const body = sent({ messages: [user('hi'), { role: 'assistant', content: '' }, user('again')] });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: 'again' }] },
    ]);
  });

  it('translates a two-step tool conversation with merged tool results', () => {
    const body = sent({
      messages: [
        { role: 'system', content: 'Use tools.' },
        user('Weather in Paris and Rome?'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '21C' }] },
        { role: 'assistant', content: 'Paris 18C, Rome 21C.' },
        user('Thanks'),
      ],
    });
    expect(body.system).toBe('Use tools.');
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          // Truncated JSON arguments become an empty object rather than failing the request.
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18C sunny' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '21C' }] },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Paris 18C, Rome 21C.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ]);
  });

  it('keeps assistant text before its tool_use, puts tool results first in a user turn, and sanitises ids', () => {
    const body = sent({
      messages: [
        user('go'),
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'call:9/x', type: 'function', function: { name: 'f', arguments: '[1,2]' } }],
        },
        { role: 'tool', tool_call_id: 'call:9/x', content: 'ok' },
        user('and now?'),
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_9_x', name: 'f', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_9_x', content: 'ok' },
          { type: 'text', text: 'and now?' },
        ],
      },
    ]);
  });
});

describe('chatRequest: parameters', () => {
  const msgs = [user('hi')];

  it("maps max_completion_tokens, then max_tokens, else the model's own limit (4,096 for a model not in the table)", () => {
    expect(sent({ messages: msgs, max_completion_tokens: 300, max_tokens: 100 }).max_tokens).toBe(300);
    expect(sent({ messages: msgs, max_tokens: 100 }).max_tokens).toBe(100);
    expect(sent({ messages: msgs, max_completion_tokens: null }).max_tokens).toBe(64_000);
    expect(sent({ messages: msgs }, ctx({ model: 'my-fine-tune' })).max_tokens).toBe(4096);
  });

  it('maps stop (string or array) to stop_sequences', () => {
    expect(sent({ messages: msgs, stop: 'END' }).stop_sequences).toEqual(['END']);
    expect(sent({ messages: msgs, stop: ['a', 'b', ' '] }).stop_sequences).toEqual(['a', 'b']);
    expect(sent({ messages: msgs, stop: null })).not.toHaveProperty('stop_sequences');
  });

  it('clamps temperature to Anthropic range and forwards top_p', () => {
    expect(sent({ messages: msgs, temperature: 1.7 }).temperature).toBe(1);
    expect(sent({ messages: msgs, temperature: 0.2, top_p: 0.9 })).toMatchObject({ temperature: 0.2, top_p: 0.9 });
  });

  const tools = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
    { type: 'function', function: { name: 'now' } },
  ];

  it('maps function tools to name/description/input_schema', () => {
    expect(sent({ messages: msgs, tools }).tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather for a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('gives a parameters schema without `type` the object type Anthropic requires', () => {
    const t = [{ type: 'function', function: { name: 'f', parameters: { properties: { a: { type: 'string' } } } } }];
    expect(sent({ messages: msgs, tools: t }).tools).toEqual([
      { name: 'f', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
    ]);
  });

  it.each([
    ['none', { type: 'none' }],
    ['auto', { type: 'auto' }],
    ['required', { type: 'any' }],
    [{ type: 'function', function: { name: 'now' } }, { type: 'tool', name: 'now' }],
  ])('maps tool_choice %j', (choice, expected) => {
    expect(sent({ messages: msgs, tools, tool_choice: choice }).tool_choice).toEqual(expected);
  });

  it('maps parallel_tool_calls:false to disable_parallel_tool_use', () => {
    expect(sent({ messages: msgs, tools, parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(sent({ messages: msgs, tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
    expect(sent({ messages: msgs, tools, parallel_tool_calls: true })).not.toHaveProperty('tool_choice');
  });

  it('sends no tool_choice without tools', () => {
    const body = sent({ messages: msgs, tool_choice: 'auto', parallel_tool_calls: false });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
  });

  it('rejects non-function tools and n > 1', () => {
    expect(() => sent({ messages: msgs, tools: [{ type: 'custom', custom: { name: 'x' } }] })).toThrow(GatewayError);
    expect(() => sent({ messages: msgs, n: 2 })).toThrow(GatewayError);
    expect(sent({ messages: msgs, n: 1 })).not.toHaveProperty('n');
  });

  it('turns json_object mode into a system instruction', () => {
    const body = sent({
      messages: [{ role: 'system', content: 'Be helpful.' }, ...msgs],
      response_format: { type: 'json_object' },
    });
    expect(body.system).toMatch(/^Be helpful\.\n\nRespond with a single valid JSON object only/);
  });

  it('turns json_schema mode into a system instruction carrying the schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    const body = sent({
      messages: msgs,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    expect(body.system).toContain('JSON');
    expect(body.system).toContain('"answer"');
    expect(body.system).toContain(JSON.stringify(schema));
    expect(sent({ messages: msgs, response_format: { type: 'text' } })).not.toHaveProperty('system');
  });

  it('sets stream from the call context', () => {
    expect(sent({ messages: msgs, stream: true }, ctx({ stream: true })).stream).toBe(true);
    expect(sent({ messages: msgs })).not.toHaveProperty('stream');
  });

  it('forwards no user, metadata, stream_options or unknown OpenAI parameters', () => {
    const body = sent(
      {
        messages: msgs,
        stream: true,
        stream_options: { include_usage: true },
        user: 'alice',
        metadata: { a: '1' },
        seed: 1,
        logit_bias: { '1': 2 },
        frequency_penalty: 0.5,
        presence_penalty: 0.5,
        logprobs: true,
        store: true,
        reasoning_effort: 'high',
        service_tier: 'auto',
        some_future_param: 42,
      },
      ctx({ stream: true }),
    );
    expect(Object.keys(body).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream']);
  });
});

describe('chatResponse', () => {
  const base = {
    id: 'msg_019Q1hrJbZG26Fb9BQhrkHEr',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-20250514',
    stop_sequence: null,
  };

  it('maps text, tool_use and usage to a chat.completion', () => {
    const res = anthropicAdapter.chatResponse(
      {
        ...base,
        content: [
          { type: 'thinking', thinking: 'Let me think', signature: 'sig' },
          { type: 'text', text: "I'll check " },
          { type: 'text', text: 'the weather.' },
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { location: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 377, output_tokens: 65, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
      ctx(),
    );
    expect(res.body).toEqual({
      id: 'chatcmpl-msg_019Q1hrJbZG26Fb9BQhrkHEr',
      object: 'chat.completion',
      created: NOW_S,
      model: 'claude-sonnet-4-20250514',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: "I'll check the weather.",
            refusal: null,
            tool_calls: [
              { id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 377,
        completion_tokens: 65,
        total_tokens: 442,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
    expect(res.usage).toEqual({
      inputTokens: 377,
      outputTokens: 65,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      estimated: false,
    });
  });

  it('gives null content and no tool_calls key when there is no text', () => {
    const res = anthropicAdapter.chatResponse(
      { ...base, content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 } },
      ctx(),
    );
    const choice = (res.body.choices as Obj[])[0];
    expect((choice.message as Obj).content).toBeNull();
    const only = anthropicAdapter.chatResponse({ ...base, content: [], stop_reason: 'end_turn' }, ctx());
    const msg = (only.body.choices as Obj[])[0].message as Obj;
    expect(msg).toEqual({ role: 'assistant', content: null, refusal: null });
    expect(only.usage).toBeNull();
    expect(only.body).not.toHaveProperty('usage');
  });

  it('counts cache reads and writes inside prompt tokens', () => {
    const res = anthropicAdapter.chatResponse(
      {
        ...base,
        content: [{ type: 'text', text: 'hi' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 10, output_tokens: 20, cache_creation_input_tokens: 300, cache_read_input_tokens: 4000 },
      },
      ctx(),
    );
    expect(res.usage).toEqual({
      inputTokens: 4310,
      outputTokens: 20,
      cacheReadTokens: 4000,
      cacheWriteTokens: 300,
      reasoningTokens: 0,
      estimated: false,
    });
    expect(res.body.usage).toEqual({
      prompt_tokens: 4310,
      completion_tokens: 20,
      total_tokens: 4330,
      prompt_tokens_details: { cached_tokens: 4000, cache_write_tokens: 300 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('reports thinking tokens as reasoning when the API splits them out', () => {
    const res = anthropicAdapter.chatResponse(
      {
        ...base,
        content: [{ type: 'text', text: 'x' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 5, output_tokens: 100, output_tokens_details: { thinking_tokens: 80 } },
      },
      ctx(),
    );
    expect(res.usage).toMatchObject({ outputTokens: 100, reasoningTokens: 80 });
  });

  const table: Array<[string | null, string]> = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
    ['some_new_reason', 'some_new_reason'],
  ];

  it.each(table)('maps stop_reason %s to finish_reason %s', (stopReason, finish) => {
    expect(toFinishReason(stopReason)).toBe(finish);
    const res = anthropicAdapter.chatResponse({ ...base, content: [{ type: 'text', text: 'x' }], stop_reason: stopReason }, ctx());
    expect((res.body.choices as Obj[])[0].finish_reason).toBe(finish);
  });
});

// ---- streaming ----

const ev = (event: string, data: Obj): SseEvent => ({ event, data: JSON.stringify(data) });

const messageStart = (usage: Obj = { input_tokens: 11, output_tokens: 1 }): SseEvent =>
  ev('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-3-opus-latest',
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });

const blockStart = (index: number, block: Obj): SseEvent =>
  ev('content_block_start', { type: 'content_block_start', index, content_block: block });
const blockDelta = (index: number, delta: Obj): SseEvent =>
  ev('content_block_delta', { type: 'content_block_delta', index, delta });
const blockStop = (index: number): SseEvent => ev('content_block_stop', { type: 'content_block_stop', index });
const messageDelta = (stopReason: string, usage: Obj = { output_tokens: 65 }): SseEvent =>
  ev('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage });
const messageStop = ev('message_stop', { type: 'message_stop' });
const ping: SseEvent = { event: 'ping', data: '{"type": "ping"}' };

function run(events: SseEvent[], c: CallContext = ctx({ stream: true })): { pieces: StreamPiece[]; finish: StreamPiece[] } {
  const t = anthropicAdapter.chatStream(c);
  const pieces = events.flatMap((e) => t.push(e));
  return { pieces, finish: t.finish() };
}

const chunks = (pieces: StreamPiece[]): Obj[] =>
  pieces.flatMap((p) => (p.kind === 'chunk' ? [JSON.parse(p.json) as Obj] : []));
const deltas = (pieces: StreamPiece[]): Array<[Obj, unknown]> =>
  chunks(pieces).map((c) => {
    const choice = (c.choices as Obj[])[0];
    return [choice.delta as Obj, choice.finish_reason];
  });

describe('chatStream', () => {
  it('translates a text stream into OpenAI chunks', () => {
    const { pieces, finish } = run([
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      ping,
      blockDelta(0, { type: 'text_delta', text: 'Hello' }),
      blockDelta(0, { type: 'text_delta', text: ' world' }),
      blockStop(0),
      messageDelta('end_turn', { output_tokens: 12 }),
      messageStop,
    ]);
    expect(finish).toEqual([]);
    expect(pieces.map((p) => p.kind)).toEqual(['chunk', 'chunk', 'chunk', 'chunk', 'usage', 'end']);
    const first = chunks(pieces)[0];
    expect(first).toEqual({
      id: 'chatcmpl-msg_abc',
      object: 'chat.completion.chunk',
      created: NOW_S,
      model: 'claude-3-opus-latest',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
    });
    expect(deltas(pieces)).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hello' }, null],
      [{ content: ' world' }, null],
      [{}, 'stop'],
    ]);
    expect(pieces.map((p) => (p.kind === 'chunk' ? p.text : null))).toEqual(['', 'Hello', ' world', '', null, null]);
    for (const c of chunks(pieces)) {
      expect(c).toMatchObject({ id: 'chatcmpl-msg_abc', object: 'chat.completion.chunk', created: NOW_S, model: 'claude-3-opus-latest' });
      expect(c).not.toHaveProperty('usage');
    }
    const usage = pieces[4];
    expect(usage).toEqual({
      kind: 'usage',
      usage: { inputTokens: 11, outputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: false },
      chunk: {
        id: 'chatcmpl-msg_abc',
        object: 'chat.completion.chunk',
        created: NOW_S,
        model: 'claude-3-opus-latest',
        choices: [],
        usage: {
          prompt_tokens: 11,
          completion_tokens: 12,
          total_tokens: 23,
          prompt_tokens_details: { cached_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0 },
        },
      },
    });
  });

  it('produces the exact OpenAI tool-call delta sequence (id/type/name once per index)', () => {
    const { pieces } = run([
      messageStart(),
      blockStart(0, { type: 'thinking', thinking: '' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'The user wants weather.' }),
      blockDelta(0, { type: 'signature_delta', signature: 'EqQBCg' }),
      blockStop(0),
      blockStart(1, { type: 'text', text: '' }),
      blockDelta(1, { type: 'text_delta', text: 'Checking.' }),
      blockStop(1),
      blockStart(2, { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '' }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{"locati' }),
      blockDelta(2, { type: 'input_json_delta', partial_json: 'on":"Paris"}' }),
      blockStop(2),
      blockStart(3, { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} }),
      blockDelta(3, { type: 'input_json_delta', partial_json: '{"tz":"CET"}' }),
      blockStop(3),
      messageDelta('tool_use', { output_tokens: 65 }),
      messageStop,
    ]);
    expect(deltas(pieces)).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Checking.' }, null],
      [
        { tool_calls: [{ index: 0, id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        null,
      ],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"locati' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: 'on":"Paris"}' } }] }, null],
      [{ tool_calls: [{ index: 1, id: 'toolu_01B', type: 'function', function: { name: 'get_time', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 1, function: { arguments: '{"tz":"CET"}' } }] }, null],
      [{}, 'tool_calls'],
    ]);
    expect(pieces.slice(-2).map((p) => p.kind)).toEqual(['usage', 'end']);
  });

  it('ignores input JSON of server-tool blocks', () => {
    const { pieces } = run([
      messageStart(),
      blockStart(0, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '{"query":"x"}' }),
      blockStop(0),
      messageDelta('end_turn'),
      messageStop,
    ]);
    expect(deltas(pieces)).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{}, 'stop'],
    ]);
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'stop'],
  ])('maps streamed stop_reason %s to %s', (stopReason, finish) => {
    const { pieces } = run([messageStart(), messageDelta(stopReason), messageStop]);
    expect(deltas(pieces).at(-1)).toEqual([{}, finish]);
  });

  it('reports cumulative usage with cache reads and writes', () => {
    const { pieces } = run([
      messageStart({ input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000 }),
      blockStart(0, { type: 'text', text: '' }),
      blockDelta(0, { type: 'text_delta', text: 'x' }),
      messageDelta('end_turn', { output_tokens: 40 }),
      messageStop,
    ]);
    const usage = pieces.find((p) => p.kind === 'usage');
    expect(usage?.kind === 'usage' && usage.usage).toEqual({
      inputTokens: 3210,
      outputTokens: 40,
      cacheReadTokens: 3000,
      cacheWriteTokens: 200,
      reasoningTokens: 0,
      estimated: false,
    });
    expect(usage?.kind === 'usage' && usage.chunk.usage).toEqual({
      prompt_tokens: 3210,
      completion_tokens: 40,
      total_tokens: 3250,
      prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 200 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('takes cumulative input counts from message_delta when the API repeats them there', () => {
    const { pieces } = run([
      messageStart({ input_tokens: 10, output_tokens: 1 }),
      messageDelta('end_turn', { input_tokens: 12, cache_read_input_tokens: 5, cache_creation_input_tokens: null, output_tokens: 7 }),
      messageStop,
    ]);
    const usage = pieces.find((p) => p.kind === 'usage');
    expect(usage?.kind === 'usage' && usage.usage).toMatchObject({ inputTokens: 17, cacheReadTokens: 5, outputTokens: 7 });
  });

  it('maps an in-stream error event like the HTTP error and stops', () => {
    const t = anthropicAdapter.chatStream(ctx({ stream: true }));
    const before = [messageStart(), blockStart(0, { type: 'text', text: '' }), blockDelta(0, { type: 'text_delta', text: 'Hi' })].flatMap(
      (e) => t.push(e),
    );
    expect(before).toHaveLength(2);
    const err = t.push({ event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' });
    expect(err).toEqual([
      { kind: 'error', failure: { status: 503, message: 'Overloaded', type: 'api_error', code: 'overloaded_error' } },
    ]);
    expect(t.push(messageStop)).toEqual([]);
    expect(t.finish()).toEqual([]);
  });

  it.each([
    ['rate_limit_error', 429, 'rate_limit_exceeded'],
    ['api_error', 500, 'api_error'],
    ['invalid_request_error', 400, 'invalid_request_error'],
  ])('maps in-stream %s to status %i', (type, status, openaiType) => {
    const { pieces } = run([messageStart(), ev('error', { type: 'error', error: { type, message: 'm' } })]);
    expect(pieces.at(-1)).toEqual({ kind: 'error', failure: { status, message: 'm', type: openaiType, code: type } });
  });

  it('reports an early-closed stream as a 502 error', () => {
    const { pieces, finish } = run([
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      blockDelta(0, { type: 'text_delta', text: 'Hel' }),
    ]);
    expect(pieces.map((p) => p.kind)).toEqual(['chunk', 'chunk']);
    expect(finish).toHaveLength(1);
    const f = finish[0];
    expect(f.kind).toBe('error');
    if (f.kind === 'error') {
      expect(f.failure.status).toBe(502);
      expect(f.failure.message).toMatch(/ended early/);
    }
  });

  it('treats a stream that stopped after message_delta but before message_stop as early-closed', () => {
    const { finish } = run([messageStart(), messageDelta('end_turn')]);
    expect(finish.map((p) => p.kind)).toEqual(['error']);
  });

  it('still sends a finish_reason when message_delta never came', () => {
    const { pieces } = run([messageStart(), messageStop]);
    expect(deltas(pieces)).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{}, 'stop'],
    ]);
  });
});

describe('parseError', () => {
  const body = (type: string, message: string): string =>
    JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_1' });

  it.each([
    [400, 'invalid_request_error', 400, 'invalid_request_error'],
    [401, 'authentication_error', 401, 'invalid_api_key'],
    [402, 'billing_error', 402, 'insufficient_quota'],
    [403, 'permission_error', 403, 'invalid_request_error'],
    [404, 'not_found_error', 404, 'invalid_request_error'],
    [413, 'request_too_large', 413, 'invalid_request_error'],
    [429, 'rate_limit_error', 429, 'rate_limit_exceeded'],
    [500, 'api_error', 500, 'api_error'],
    [504, 'timeout_error', 504, 'api_error'],
    [529, 'overloaded_error', 503, 'api_error'],
  ])('maps HTTP %i %s', (status, type, outStatus, openaiType) => {
    expect(anthropicAdapter.parseError(status, body(type, 'Something.'), {})).toEqual({
      status: outStatus,
      message: 'Something.',
      type: openaiType,
      code: type,
    });
  });

  it('reads retry-after (seconds), retry-after-ms and HTTP dates', () => {
    expect(anthropicAdapter.parseError(429, body('rate_limit_error', 'slow down'), { 'retry-after': '7' }).retryAfterMs).toBe(7000);
    expect(anthropicAdapter.parseError(529, body('overloaded_error', 'Overloaded'), { 'retry-after-ms': '1500', 'retry-after': '9' })).toEqual({
      status: 503,
      message: 'Overloaded',
      type: 'api_error',
      code: 'overloaded_error',
      retryAfterMs: 1500,
    });
    const date = new Date(NOW + 30_000).toUTCString();
    expect(anthropicAdapter.parseError(429, body('rate_limit_error', 'x'), { 'Retry-After': [date] }).retryAfterMs).toBe(30_000);
    expect(anthropicAdapter.parseError(429, body('rate_limit_error', 'x'), { 'retry-after': 'soon' })).not.toHaveProperty('retryAfterMs');
  });

  it('handles an HTML body with a short snippet', () => {
    const html =
      '<html><head><title>502 Bad Gateway</title><style>body{color:red}</style></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudflare</center>' +
      'x'.repeat(500) +
      '</body></html>';
    const f = anthropicAdapter.parseError(502, html, {});
    expect(f.status).toBe(502);
    expect(f.type).toBe('api_error');
    expect(f.code).toBeNull();
    expect(f.message.startsWith('502 Bad Gateway 502 Bad Gateway cloudflare')).toBe(true);
    expect(f.message).not.toContain('<');
    expect(f.message).not.toContain('color:red');
    expect(f.message.length).toBeLessThanOrEqual(201);
  });

  it('handles empty and JSON-but-foreign bodies', () => {
    expect(anthropicAdapter.parseError(529, '', {})).toEqual({
      status: 503,
      message: 'Anthropic returned HTTP 529 with an empty body',
      type: 'api_error',
      code: null,
    });
    const f = anthropicAdapter.parseError(404, '{"message":"no route"}', {});
    expect(f).toMatchObject({ status: 404, type: 'invalid_request_error', code: null });
  });
});

describe('models', () => {
  it('lists models with the same auth headers', () => {
    const req = anthropicAdapter.modelsRequest({ provider: provider('https://api.anthropic.com/v1/'), apiKey: 'sk-ant-test' });
    expect(req).toEqual({
      method: 'GET',
      url: 'https://api.anthropic.com/v1/models?limit=1000',
      headers: { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
    });
  });

  it('reads data[].id', () => {
    expect(
      anthropicAdapter.parseModels({
        data: [
          { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5' },
          { type: 'model', id: 'claude-haiku-4-5' },
          { id: 42 },
        ],
        has_more: false,
      }),
    ).toEqual(['claude-sonnet-4-5-20250929', 'claude-haiku-4-5']);
    expect(anthropicAdapter.parseModels('nope')).toEqual([]);
  });

  it('serves no embeddings', () => {
    expect(anthropicAdapter.embeddingsRequest).toBeUndefined();
  });
});
