import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../core/errors.ts';
import { geminiAdapter, UnsupportedInputError } from '../../core/providers/gemini/index.ts';
import { toFinishReason } from '../../core/providers/gemini/finish-reason.ts';
import { toGeminiParameters, toGeminiSchema } from '../../core/providers/gemini/request.ts';
import { fromGeminiUsage } from '../../core/providers/gemini/usage.ts';
import type { CallContext, ChatRequest, ProviderSettings, StreamPiece } from '../../core/providers/types.ts';
import { providerSettings } from '../support/provider-settings.ts';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const NOW_S = Math.floor(NOW / 1000);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

type Obj = Record<string, unknown>;

const provider = (baseUrl = 'https://generativelanguage.googleapis.com'): ProviderSettings => providerSettings({ name: 'gemini', type: 'gemini', baseUrl });

function ctx(over: Partial<CallContext> = {}): CallContext {
  return { provider: provider(), model: 'gemini-2.5-flash', apiKey: 'AIza-test', stream: false, ...over };
}

/** The Gemini body the adapter would send for an OpenAI body. */
function sent(body: Obj, c: CallContext = ctx()): Obj {
  const req = geminiAdapter.chatRequest({ model: 'whatever', messages: [{ role: 'user', content: 'Hi' }], ...body } as ChatRequest, c);
  return JSON.parse(req.body ?? 'null') as Obj;
}

const sse = (data: unknown) => ({ event: null, data: JSON.stringify(data) });
const chunksOf = (pieces: StreamPiece[]): Obj[] =>
  pieces.flatMap((p) => (p.kind === 'chunk' ? [JSON.parse(p.json) as Obj] : []));
const choice0 = (chunk: Obj): Obj => (chunk.choices as Obj[])[0];

describe('gemini chatRequest: endpoint', () => {
  it('posts generateContent with the key header', () => {
    const req = geminiAdapter.chatRequest({ model: 'x', messages: [{ role: 'user', content: 'Hi' }] }, ctx());
    expect(req.method).toBe('POST');
    expect(req.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(req.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'AIza-test' });
  });

  it('streams over SSE, normalises `models/` ids and tolerates a trailing slash or /v1beta', () => {
    for (const base of ['https://generativelanguage.googleapis.com/', 'https://generativelanguage.googleapis.com/v1beta/']) {
      const req = geminiAdapter.chatRequest(
        { model: 'x', messages: [{ role: 'user', content: 'Hi' }] },
        ctx({ provider: provider(base), model: 'models/gemini-2.5-pro', stream: true }),
      );
      expect(req.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    }
  });

  it('sends no key header when the provider has no key', () => {
    const req = geminiAdapter.chatRequest({ model: 'x', messages: [] }, ctx({ apiKey: null }));
    expect(req.headers).toEqual({ 'content-type': 'application/json' });
  });
});

describe('gemini chatRequest: messages', () => {
  it('lifts system and developer text into systemInstruction and maps roles', () => {
    const body = sent({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Bonjour' },
        { role: 'user', content: 'Ça va?' },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Bonjour' }] },
      { role: 'user', parts: [{ text: 'Ça va?' }] },
    ]);
  });

  it('merges consecutive turns of one role and skips empty text', () => {
    const body = sent({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'two' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'three' },
      ],
    });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] }]);
  });

  it('maps images, audio and inline files', () => {
    const body = sent({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG?size=large' } },
            { type: 'image_url', image_url: { url: 'https://example.com/render' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'file', file: { file_data: 'JVBERi0=', filename: 'b.pdf' } },
          ],
        },
      ],
    });
    expect((body.contents as Obj[])[0].parts).toEqual([
      { text: 'What is this?' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { fileUri: 'https://example.com/cat.JPG?size=large', mimeType: 'image/jpeg' } },
      { fileData: { fileUri: 'https://example.com/render' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('refuses parts it cannot express with a 400', () => {
    const attempt = () => sent({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] });
    expect(attempt).toThrow(UnsupportedInputError);
    try {
      attempt();
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).status).toBe(400);
      expect((err as GatewayError).param).toBe('messages[0].content[0].file');
    }
  });
});

describe('gemini: a two-step tool conversation', () => {
  const tools = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city',
        strict: true,
        parameters: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
          required: ['city', 'unit'],
          additionalProperties: false,
        },
      },
    },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
  ];

  it('maps tools, mints ids for the calls, then recovers names for the results', () => {
    // Step 1: the question goes out with the tools.
    const first = sent({ messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }], tools, tool_choice: 'auto' });
    expect(first.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather for a city',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
              required: ['city', 'unit'],
            },
          },
          // No arguments: Gemini rejects an object schema with empty properties.
          { name: 'get_time' },
        ],
      },
    ]);
    expect(first.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });

    // Gemini answers with two calls (no ids) and STOP.
    const answer = geminiAdapter.chatResponse(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'c' } }, thoughtSignature: 'c2lnLUE=' },
                { functionCall: { name: 'get_weather', args: { city: 'Rome', unit: 'c' } } },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 20, totalTokenCount: 60 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'resp-1',
      },
      ctx(),
    );
    const c = (answer.body.choices as Obj[])[0];
    expect(c.finish_reason).toBe('tool_calls');
    const message = c.message as Obj;
    expect(message.content).toBeNull();
    const calls = message.tool_calls as Obj[];
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(calls[0].id).not.toBe(calls[1].id);
    expect(calls[0]).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
      extra_content: { google: { thought_signature: 'c2lnLUE=' } },
    });
    expect(calls[1]).not.toHaveProperty('extra_content');

    // Step 2: the client replays the assistant message and answers each call by id.
    const second = sent({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        message,
        { role: 'tool', tool_call_id: calls[1].id, content: 'sunny, 25C' },
        { role: 'tool', tool_call_id: calls[0].id, content: '{"temp":21,"sky":"cloudy"}' },
        { role: 'user', content: 'Thanks' },
      ],
      tools,
    });
    expect(second.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'c' } }, thoughtSignature: 'c2lnLUE=' },
          { functionCall: { name: 'get_weather', args: { city: 'Rome', unit: 'c' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { content: 'sunny, 25C' } } },
          { functionResponse: { name: 'get_weather', response: { temp: 21, sky: 'cloudy' } } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('recovers distinct names by id and puts the placeholder signature on calls that lost theirs', () => {
    const body = sent({
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: '[1,2]' }] },
        { role: 'tool', tool_call_id: 'call_a', content: 'null' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'go' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'skip_thought_signature_validator' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          // Only JSON objects pass through as the response; arrays and scalars are wrapped.
          { functionResponse: { name: 'get_time', response: { content: '[1,2]' } } },
          { functionResponse: { name: 'get_weather', response: { content: 'null' } } },
        ],
      },
    ]);
  });

  it('rejects a tool result whose id matches no earlier call', () => {
    try {
      sent({ messages: [{ role: 'user', content: 'go' }, { role: 'tool', tool_call_id: 'call_zzz', content: 'x' }] });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).status).toBe(400);
      expect((err as GatewayError).param).toBe('messages[1].tool_call_id');
    }
  });

  it('maps every tool_choice form', () => {
    const cfg = (tool_choice: unknown) => sent({ tools, tool_choice }).toolConfig;
    expect(cfg('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(cfg('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(cfg('required')).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(cfg({ type: 'function', function: { name: 'get_time' } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] },
    });
    expect(cfg({ type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_weather' } }] } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
    expect(cfg(undefined)).toBeUndefined();
    // allowed_tools in auto mode: Gemini restricts names only in ANY mode, so only the allowed tools are offered.
    const auto = sent({ tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_time' } }] } } });
    expect(auto.tools).toEqual([{ functionDeclarations: [{ name: 'get_time' }] }]);
    expect(auto.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    // Without tools there is nothing to configure.
    expect(sent({ tool_choice: 'none' })).not.toHaveProperty('toolConfig');
  });

  it('maps the deprecated functions protocol', () => {
    const body = sent({
      functions: [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
      function_call: { name: 'lookup' },
      messages: [
        { role: 'user', content: 'find x' },
        { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"q":"x"}' } },
        { role: 'function', name: 'lookup', content: 'found' },
      ],
    });
    expect(body.tools).toEqual([{ functionDeclarations: [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] }]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'find x' }] },
      { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'x' } }, thoughtSignature: 'skip_thought_signature_validator' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { content: 'found' } } }] },
    ]);
  });

  it('refuses custom tools', () => {
    expect(() => sent({ tools: [{ type: 'custom', custom: { name: 'x' } }] })).toThrow(UnsupportedInputError);
  });
});

describe('gemini: JSON Schema cleaning', () => {
  it('inlines $refs, folds nullables and drops what Gemini rejects', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      $defs: {
        Address: { type: 'object', properties: { street: { type: 'string', format: 'uri' }, zip: { type: ['string', 'null'] } }, required: ['street'] },
      },
      properties: {
        home: { $ref: '#/$defs/Address', description: 'Where they live' },
        nickname: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null },
        kind: { const: 'person' },
        age: { type: 'integer', format: 'int32', exclusiveMinimum: 0 },
        born: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        either: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        level: { enum: [1, 2, 3] },
      },
      required: ['home', 'ghost'],
    };
    expect(toGeminiSchema(schema)).toEqual({
      type: 'object',
      properties: {
        home: {
          type: 'object',
          description: 'Where they live',
          properties: { street: { type: 'string' }, zip: { type: 'string', nullable: true } },
          required: ['street'],
        },
        nickname: { type: 'string', nullable: true, default: null },
        kind: { type: 'string', enum: ['person'] },
        age: { type: 'integer', format: 'int32' },
        born: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        level: {},
      },
      required: ['home'],
    });
  });

  it('cuts recursive references and merges allOf', () => {
    const schema = {
      type: 'object',
      definitions: { Node: { type: 'object', properties: { child: { $ref: '#/definitions/Node' } } } },
      properties: {
        root: { $ref: '#/definitions/Node' },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } } }] },
      },
    };
    expect(toGeminiSchema(schema)).toEqual({
      type: 'object',
      properties: {
        root: { type: 'object', properties: { child: { type: 'object' } } },
        both: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] },
      },
    });
  });

  it('omits parameters for argument-less functions', () => {
    expect(toGeminiParameters(undefined)).toBeUndefined();
    expect(toGeminiParameters({ type: 'object', properties: {}, additionalProperties: false })).toBeUndefined();
    expect(toGeminiParameters({ type: 'object', properties: { q: { type: 'string' } } })).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
    });
  });
});

describe('gemini chatRequest: generation config', () => {
  it('maps sampling parameters and drops what Gemini lacks', () => {
    const body = sent({
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 100,
      max_completion_tokens: 200,
      stop: ['END', ''],
      n: 2,
      seed: 7,
      user: 'alice',
      presence_penalty: 0.5,
      logprobs: true,
      parallel_tool_calls: false,
      stream_options: { include_usage: true },
      made_up: 1,
    });
    expect(body.generationConfig).toEqual({
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 200,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
    });
    expect(Object.keys(body).sort()).toEqual(['contents', 'generationConfig']);
    expect(sent({ max_tokens: 50, stop: 'STOP' }).generationConfig).toEqual({ maxOutputTokens: 50, stopSequences: ['STOP'] });
    expect(sent({})).not.toHaveProperty('generationConfig');
  });

  it('maps JSON mode and structured output', () => {
    expect(sent({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    expect(sent({ response_format: { type: 'text' } })).not.toHaveProperty('generationConfig');
    const schema = sent({
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'answer',
          strict: true,
          schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false },
        },
      },
    });
    expect(schema.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    });
  });

  it('maps reasoning_effort to a thinking budget', () => {
    const budget = (effort: string) => (sent({ reasoning_effort: effort }).generationConfig as Obj | undefined)?.thinkingConfig;
    expect(budget('none')).toEqual({ thinkingBudget: 0 });
    expect(budget('minimal')).toEqual({ thinkingBudget: 512 });
    expect(budget('low')).toEqual({ thinkingBudget: 1024 });
    expect(budget('medium')).toEqual({ thinkingBudget: 8192 });
    expect(budget('high')).toEqual({ thinkingBudget: 24576 });
    expect(budget('bogus')).toBeUndefined();
  });
});

describe('gemini chatResponse', () => {
  it('joins answer text, skips thoughts and signature-only parts, and counts thoughts as output', () => {
    const result = geminiAdapter.chatResponse(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'Let me think about 1+1...', thought: true },
                { thoughtSignature: 'c2ln' },
                { text: '1+1 ', thoughtSignature: 'c2ln' },
                { text: 'equals 2.' },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 15, candidatesTokenCount: 6, thoughtsTokenCount: 30, cachedContentTokenCount: 4, totalTokenCount: 51 },
        modelVersion: 'gemini-2.5-flash-preview',
        responseId: 'Il0taoSYJ5Cez7',
      },
      ctx(),
    );
    expect(result.body).toEqual({
      id: 'chatcmpl-Il0taoSYJ5Cez7',
      object: 'chat.completion',
      created: NOW_S,
      model: 'gemini-2.5-flash-preview',
      choices: [
        { index: 0, message: { role: 'assistant', content: '1+1 equals 2.', refusal: null }, logprobs: null, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: 15,
        completion_tokens: 36,
        total_tokens: 51,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 30 },
      },
    });
    expect(result.usage).toEqual({
      inputTokens: 15,
      outputTokens: 36,
      cacheReadTokens: 4,
      cacheWriteTokens: 0,
      reasoningTokens: 30,
      estimated: false,
    });
  });

  it('maps finish reasons per candidate and falls back to ctx.model and a random id', () => {
    const result = geminiAdapter.chatResponse(
      {
        candidates: [
          { content: { parts: [{ text: 'cut' }] }, finishReason: 'MAX_TOKENS', index: 1 },
          { content: { parts: [{ text: 'hm' }] }, finishReason: 'SAFETY' },
        ],
      },
      ctx({ model: 'models/gemini-2.5-pro' }),
    );
    expect(result.body.model).toBe('gemini-2.5-pro');
    expect(result.body.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(result.body).not.toHaveProperty('usage');
    expect(result.usage).toBeNull();
    const choices = result.body.choices as Obj[];
    expect(choices.map((c) => [c.index, c.finish_reason])).toEqual([
      [0, 'content_filter'],
      [1, 'length'],
    ]);
  });

  it('answers a blocked prompt with one content_filter choice', () => {
    const result = geminiAdapter.chatResponse(
      { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, responseId: 'r' },
      ctx(),
    );
    expect(result.body.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'content_filter' },
    ]);
    expect(result.usage?.inputTokens).toBe(9);
    expect(result.usage?.outputTokens).toBe(0);
  });

  it('keeps text next to tool calls', () => {
    const result = geminiAdapter.chatResponse(
      { candidates: [{ content: { parts: [{ text: 'On it.' }, { functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' }] },
      ctx(),
    );
    const c = (result.body.choices as Obj[])[0];
    expect(c.finish_reason).toBe('tool_calls');
    expect((c.message as Obj).content).toBe('On it.');
    expect(((c.message as Obj).tool_calls as Obj[])[0].function).toEqual({ name: 'f', arguments: '{}' });
  });

  it('rejects a body that is not an object', () => {
    expect(() => geminiAdapter.chatResponse('oops', ctx())).toThrow(GatewayError);
  });
});

describe('gemini finish reasons and usage', () => {
  it('follows the protocol table', () => {
    expect(toFinishReason('STOP', false)).toBe('stop');
    expect(toFinishReason('STOP', true)).toBe('tool_calls');
    expect(toFinishReason('MAX_TOKENS', false)).toBe('length');
    expect(toFinishReason('MAX_TOKENS', true)).toBe('length');
    for (const r of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'IMAGE_OTHER']) {
      expect(toFinishReason(r, false)).toBe('content_filter');
    }
    for (const r of ['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'OTHER', 'LANGUAGE', 'FINISH_REASON_UNSPECIFIED', 'SOMETHING_NEW']) {
      expect(toFinishReason(r, false)).toBe('stop');
    }
    expect(toFinishReason(undefined, false)).toBe('stop');
  });

  it('adds tool-use prompt tokens to the input', () => {
    expect(
      fromGeminiUsage({ promptTokenCount: 10, toolUsePromptTokenCount: 5, candidatesTokenCount: 3, thoughtsTokenCount: 2, totalTokenCount: 20 }),
    ).toEqual({ inputTokens: 15, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 2, estimated: false });
    expect(fromGeminiUsage(undefined)).toBeNull();
  });
});

describe('gemini chatStream', () => {
  const streamCtx = () => ctx({ stream: true });

  it('streams text with running usage and ends at close', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    const pieces: StreamPiece[] = [];
    const base = { modelVersion: 'gemini-2.5-flash', responseId: 'abc' };
    pieces.push(
      ...t.push(sse({ candidates: [{ content: { role: 'model', parts: [{ text: 'Thinking', thought: true }] }, index: 0 }], usageMetadata: { promptTokenCount: 8, thoughtsTokenCount: 12, totalTokenCount: 20 }, ...base })),
    );
    pieces.push(...t.push(sse({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello' }] }, index: 0 }], usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 1, thoughtsTokenCount: 12, totalTokenCount: 21 }, ...base })));
    pieces.push(...t.push(sse({ candidates: [{ content: { role: 'model', parts: [{ text: ' world' }, { text: '!' }] }, index: 0 }], usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 3, thoughtsTokenCount: 12, totalTokenCount: 23 }, ...base })));
    pieces.push(
      ...t.push(sse({ candidates: [{ content: { role: 'model', parts: [{ text: '', thoughtSignature: 'c2ln' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 4, thoughtsTokenCount: 12, totalTokenCount: 24 }, ...base })),
    );
    expect(pieces.every((p) => p.kind === 'chunk')).toBe(true);
    const end = t.finish();

    const chunks = chunksOf(pieces);
    expect(chunks.map((c) => [choice0(c).delta, choice0(c).finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hello' }, null],
      [{ content: ' world!' }, null],
      [{}, 'stop'],
    ]);
    expect(pieces.map((p) => (p.kind === 'chunk' ? p.text : null))).toEqual(['', 'Hello', ' world!', '']);
    for (const c of chunks) {
      expect(c).toMatchObject({ id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: NOW_S, model: 'gemini-2.5-flash' });
      expect(c).not.toHaveProperty('usage');
    }

    expect(end.map((p) => p.kind)).toEqual(['usage', 'end']);
    const usage = end[0];
    if (usage.kind !== 'usage') throw new Error('expected usage');
    expect(usage.usage).toEqual({ inputTokens: 8, outputTokens: 16, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 12, estimated: false });
    expect(usage.chunk).toEqual({
      id: 'chatcmpl-abc',
      object: 'chat.completion.chunk',
      created: NOW_S,
      model: 'gemini-2.5-flash',
      choices: [],
      usage: {
        prompt_tokens: 8,
        completion_tokens: 16,
        total_tokens: 24,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
    });
    expect(t.finish()).toEqual([]);
  });

  it('sends each function call whole in one delta, numbered from 0', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    const pieces = [
      ...t.push(sse({ candidates: [{ content: { parts: [{ text: 'Let me check.' }] } }], responseId: 'x' })),
      ...t.push(
        sse({
          candidates: [
            {
              content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }, { functionCall: { name: 'get_time', args: {} } }] },
              finishReason: 'STOP',
            },
          ],
          usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 7, totalTokenCount: 12 },
        }),
      ),
    ];
    const deltas = chunksOf(pieces).map((c) => choice0(c));
    expect(deltas[1].delta).toEqual({ content: 'Let me check.' });
    const first = ((deltas[2].delta as Obj).tool_calls as Obj[])[0];
    const second = ((deltas[3].delta as Obj).tool_calls as Obj[])[0];
    expect(first).toMatchObject({
      index: 0,
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      extra_content: { google: { thought_signature: 'c2ln' } },
    });
    expect(first.id).toMatch(/^call_/);
    expect(second).toMatchObject({ index: 1, type: 'function', function: { name: 'get_time', arguments: '{}' } });
    expect(second.id).not.toBe(first.id);
    expect(deltas[4]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    expect(pieces[2].kind === 'chunk' && pieces[2].text).toBe('{"city":"Paris"}');
    expect(t.finish().map((p) => p.kind)).toEqual(['usage', 'end']);
  });

  it('satisfies the openai-node stream helper', async () => {
    const t = geminiAdapter.chatStream(streamCtx());
    const pieces = [
      ...t.push(sse({ candidates: [{ content: { parts: [{ text: 'Sure' }] } }], responseId: 'h' })),
      ...t.push(sse({ candidates: [{ content: { parts: [{ functionCall: { name: 'lookup', args: { q: 'x' } }, thoughtSignature: 'c2ln' }] }, finishReason: 'STOP' }] })),
      ...t.finish(),
    ];
    const lines = pieces.flatMap((p) => (p.kind === 'chunk' ? [p.json] : p.kind === 'usage' ? [JSON.stringify(p.chunk)] : []));
    const readable = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(lines.map((l) => `${l}\n`).join('')));
        controller.close();
      },
    });
    const final = await ChatCompletionStream.fromReadableStream(readable).finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.content).toBe('Sure');
    // The signature survives accumulation, so a client replaying this message hands it back.
    expect(final.choices[0].message.tool_calls?.[0]).toMatchObject({
      type: 'function',
      function: { name: 'lookup', arguments: '{"q":"x"}' },
      extra_content: { google: { thought_signature: 'c2ln' } },
    });
  });

  it('reports a stream that closes before any finishReason', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    const pieces = t.push(sse({ candidates: [{ content: { parts: [{ text: 'Hel' }] } }], usageMetadata: { promptTokenCount: 3 } }));
    expect(chunksOf(pieces)).toHaveLength(2);
    const end = t.finish();
    expect(end).toHaveLength(1);
    expect(end[0]).toMatchObject({ kind: 'error', failure: { status: 502, type: 'api_error' } });
  });

  it('reports a stream that closes without any event', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    expect(t.finish()).toMatchObject([{ kind: 'error', failure: { status: 502 } }]);
  });

  it('turns an error event into an error piece and ignores what follows', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    t.push(sse({ candidates: [{ content: { parts: [{ text: 'a' }] } }] }));
    const err = t.push(sse({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }));
    expect(err).toEqual([
      { kind: 'error', failure: { status: 503, message: 'The model is overloaded. Please try again later.', type: 'api_error', code: 'UNAVAILABLE' } },
    ]);
    expect(t.push(sse({ candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'STOP' }] }))).toEqual([]);
    expect(t.finish()).toEqual([]);
  });

  it('fails on a malformed event and ignores blank ones', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    expect(t.push({ event: null, data: '' })).toEqual([]);
    expect(t.push({ event: null, data: '{"candidates":' })).toMatchObject([{ kind: 'error', failure: { status: 502 } }]);
  });

  it('finishes a blocked prompt with content_filter', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    const pieces = t.push(sse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 }, responseId: 'b' }));
    expect(chunksOf(pieces).map((c) => [choice0(c).delta, choice0(c).finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{}, 'content_filter'],
    ]);
    expect(t.finish().map((p) => p.kind)).toEqual(['usage', 'end']);
  });

  it('keeps choices apart when n > 1', () => {
    const t = geminiAdapter.chatStream(streamCtx());
    const pieces = t.push(
      sse({
        candidates: [
          // proto3 JSON omits index 0.
          { content: { parts: [{ text: 'A' }] }, finishReason: 'STOP' },
          { content: { parts: [{ text: 'B' }] }, index: 1 },
        ],
      }),
    );
    expect(chunksOf(pieces).map((c) => [choice0(c).index, choice0(c).delta, choice0(c).finish_reason])).toEqual([
      [0, { role: 'assistant', content: '' }, null],
      [0, { content: 'A' }, null],
      [0, {}, 'stop'],
      [1, { role: 'assistant', content: '' }, null],
      [1, { content: 'B' }, null],
    ]);
    // Candidate 1 never finished.
    expect(t.finish()[0].kind).toBe('error');
  });
});

describe('gemini parseError', () => {
  it('maps a JSON error body', () => {
    const body = JSON.stringify({ error: { code: 404, message: 'models/gemini-9 is not found for API version v1beta', status: 'NOT_FOUND' } });
    expect(geminiAdapter.parseError(404, body, {})).toEqual({
      status: 404,
      message: 'models/gemini-9 is not found for API version v1beta',
      type: 'invalid_request_error',
      code: 'NOT_FOUND',
    });
  });

  it('turns the 400 for a bad API key into a 401 so the gateway fails over', () => {
    const body = JSON.stringify({
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
      },
    });
    expect(geminiAdapter.parseError(400, body, {})).toMatchObject({ status: 401, type: 'invalid_api_key', code: 'INVALID_ARGUMENT' });
    const expired = JSON.stringify({ error: { code: 400, message: 'API key expired. Please renew the API key.', status: 'INVALID_ARGUMENT' } });
    expect(geminiAdapter.parseError(400, expired, {}).status).toBe(401);
    const ordinary = JSON.stringify({ error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } });
    expect(geminiAdapter.parseError(400, ordinary, {})).toMatchObject({ status: 400, type: 'invalid_request_error' });
  });

  it('reads the retry delay from RetryInfo, and a header over it', () => {
    const body = JSON.stringify([
      {
        error: {
          code: 429,
          message: 'You exceeded your current quota.',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34s' }],
        },
      },
    ]);
    expect(geminiAdapter.parseError(429, body, {})).toEqual({
      status: 429,
      message: 'You exceeded your current quota.',
      type: 'rate_limit_exceeded',
      code: 'RESOURCE_EXHAUSTED',
      retryAfterMs: 34_000,
    });
    expect(geminiAdapter.parseError(429, body, { 'Retry-After': '2' }).retryAfterMs).toBe(2000);
    expect(geminiAdapter.parseError(429, body, { 'retry-after-ms': ['150'] }).retryAfterMs).toBe(150);
  });

  it('maps permission and server errors', () => {
    const denied = JSON.stringify({ error: { code: 403, message: 'Method doesn\'t allow unregistered callers.', status: 'PERMISSION_DENIED' } });
    expect(geminiAdapter.parseError(403, denied, {})).toMatchObject({ status: 403, type: 'invalid_api_key', code: 'PERMISSION_DENIED' });
    const internal = JSON.stringify({ error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } });
    expect(geminiAdapter.parseError(500, internal, {})).toMatchObject({ status: 500, type: 'api_error', code: 'INTERNAL' });
  });

  it('survives HTML and empty bodies', () => {
    const html = '<!DOCTYPE html><html><head><title>Error 502 (Server Error)!!1</title><style>body{}</style></head><body><p>That’s an error.</p></body></html>';
    expect(geminiAdapter.parseError(502, html, {})).toEqual({
      status: 502,
      message: 'Gemini returned HTTP 502: Error 502 (Server Error)!!1',
      type: 'api_error',
      code: null,
    });
    expect(geminiAdapter.parseError(503, '', {})).toEqual({
      status: 503,
      message: 'Gemini returned HTTP 503 with an empty body',
      type: 'api_error',
      code: null,
    });
    expect(geminiAdapter.parseError(429, 'Too Many Requests', {})).toMatchObject({ type: 'rate_limit_exceeded', message: 'Gemini returned HTTP 429: Too Many Requests' });
  });
});

describe('gemini models', () => {
  it('lists models with the key header', () => {
    const req = geminiAdapter.modelsRequest({ provider: provider('https://generativelanguage.googleapis.com/v1beta'), apiKey: 'AIza-test' });
    expect(req).toEqual({
      method: 'GET',
      url: 'https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000',
      headers: { 'x-goog-api-key': 'AIza-test' },
    });
  });

  it('keeps chat and embedding models, without the models/ prefix', () => {
    const ids = geminiAdapter.parseModels({
      models: [
        { name: 'models/gemini-2.5-flash', supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent'] },
        { name: 'models/gemini-embedding-001', supportedGenerationMethods: ['embedContent', 'batchEmbedContents'] },
        { name: 'models/imagen-4.0-generate-001', supportedGenerationMethods: ['predict'] },
        { name: 'models/some-new-model' },
        { displayName: 'nameless' },
      ],
    });
    expect(ids).toEqual(['gemini-2.5-flash', 'gemini-embedding-001', 'some-new-model']);
    expect(geminiAdapter.parseModels({})).toEqual([]);
    expect(geminiAdapter.parseModels(null)).toEqual([]);
  });
});

describe('gemini embeddings', () => {
  const embCtx = () => ctx({ model: 'gemini-embedding-001' });

  it('batches string inputs with the requested dimensions', () => {
    const c = embCtx();
    const req = geminiAdapter.embeddingsRequest?.({ model: 'x', input: ['hello world', 'bye'], dimensions: 256, encoding_format: 'base64', user: 'u' }, c);
    expect(req?.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(req?.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'AIza-test' });
    expect(JSON.parse(req?.body ?? '')).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 256 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'bye' }] }, outputDimensionality: 256 },
      ],
    });
    const single = geminiAdapter.embeddingsRequest?.({ model: 'x', input: 'one' }, embCtx());
    expect(JSON.parse(single?.body ?? '')).toEqual({ requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'one' }] } }] });
  });

  it('refuses token arrays, empty and oversized batches with a 400', () => {
    for (const input of [[1, 2, 3], [[1, 2], [3]], [], Array.from({ length: 101 }, () => 'x'), 42]) {
      expect(() => geminiAdapter.embeddingsRequest?.({ model: 'x', input }, embCtx())).toThrow(UnsupportedInputError);
    }
  });

  it('returns float vectors and estimates usage from words when Gemini reports none', () => {
    const c = embCtx();
    geminiAdapter.embeddingsRequest?.({ model: 'x', input: ['hello  world', 'bye'] }, c);
    const result = geminiAdapter.embeddingsResponse?.({ embeddings: [{ values: [0.1, -0.2] }, { values: [0.3, 0.4] }] }, c);
    expect(result?.body).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.1, -0.2] },
        { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
      ],
      model: 'gemini-embedding-001',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    expect(result?.usage).toMatchObject({ inputTokens: 3, outputTokens: 0, estimated: true });
  });

  it('uses a reported token count when there is one', () => {
    const c = embCtx();
    geminiAdapter.embeddingsRequest?.({ model: 'x', input: 'hello world' }, c);
    const result = geminiAdapter.embeddingsResponse?.({ embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: 5 } }, c);
    expect(result?.usage).toMatchObject({ inputTokens: 5, estimated: false });
    expect((result?.body as Obj).usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
  });

  it('leaves usage to the caller when it cannot count, and fails on an empty answer', () => {
    const result = geminiAdapter.embeddingsResponse?.({ embeddings: [{ values: [1] }] }, embCtx());
    expect(result?.usage).toBeNull();
    expect(() => geminiAdapter.embeddingsResponse?.({}, embCtx())).toThrow(GatewayError);
  });
});
