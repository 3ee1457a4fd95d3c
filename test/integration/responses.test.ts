/**
 * `POST /v1/responses` through the real gateway with the official `openai` SDK: a native pass-through to
 * an OpenAI Responses upstream, and bridges to a chat-only upstream, Anthropic and Gemini, each with
 * `responses.create`, `responses.stream` (finalResponse, output_text) and a function-call round trip;
 * audit rows with usage and cost; errors in the OpenAI envelope.
 */
import OpenAI from 'openai';
import type { Response, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIResponsesUpstream } from '../fakes/openai-responses-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { apiError, auditRow } from '../support/call-checks.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

type Kind = 'native' | 'chat' | 'anthropic' | 'gemini';
const MODEL: Record<Kind, string> = { native: 'gpt-5-codex', chat: 'deepseek-chat', anthropic: 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' };
const KINDS: Kind[] = ['native', 'chat', 'anthropic', 'gemini'];

const ups = {} as Record<Kind, FakeUpstream>;
let t: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  ups.native = await startOpenAIResponsesUpstream({ models: [MODEL.native], requireKey: 'sk-native-0123456789' });
  ups.chat = await startOpenAIUpstream({ models: [MODEL.chat] });
  ups.anthropic = await startAnthropicUpstream({ models: [MODEL.anthropic] });
  ups.gemini = await startGeminiUpstream({ models: [MODEL.gemini] });
  t = await startTestGateway({
    providers: [
      { name: 'oa', type: 'openai', baseUrl: ups.native.url, secret: 'sk-native-0123456789', models: [MODEL.native] },
      { name: 'ds', type: 'openai-compatible', baseUrl: ups.chat.url, secret: 'sk-chat-0123456789', models: [MODEL.chat] },
      { name: 'an', type: 'anthropic', baseUrl: ups.anthropic.url, secret: 'test-ant-0123456789', models: [MODEL.anthropic] },
      { name: 'ge', type: 'gemini', baseUrl: ups.gemini.url, secret: 'test-gem-0123456789', models: [MODEL.gemini] },
    ],
  });
  client = t.client();
});
afterAll(async () => {
  await t?.close();
  for (const u of Object.values(ups)) await u?.close();
});

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function functionCall(r: Response) {
  const call = r.output.find((o) => o.type === 'function_call');
  if (!call || call.type !== 'function_call') throw new Error(`no function call in ${JSON.stringify(r.output)}`);
  return call;
}

describe.each(KINDS)('%s upstream', (kind) => {
  const model = MODEL[kind];

  it('responses.create: text, usage and cost, audited', async () => {
    const { data, response } = await client.responses.create({ model, input: 'hello there world', instructions: 'Be brief.' }).withResponse();
    expect(data.object).toBe('response');
    expect(data.status).toBe('completed');
    expect(data.output_text).toMatch(/Echo: hello there world$/);
    expect(data.id).toMatch(/^resp_/);
    expect(data.usage?.input_tokens).toBeGreaterThan(0);
    expect(data.usage?.total_tokens).toBe((data.usage?.input_tokens ?? 0) + (data.usage?.output_tokens ?? 0));
    expect(response.headers.get('x-gateway-model')).toBe(model);
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.endpoint).toBe('/v1/responses');
    expect(row.status).toBe(200);
    expect(row.inputTokens).toBe(data.usage?.input_tokens);
    expect(row.outputTokens).toBe(data.usage?.output_tokens);
  });

  it('responses.stream: finalResponse and output_text', async () => {
    const stream = client.responses.stream({ model, input: 'stream me please' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toMatch(/Echo: stream me please$/);
    expect(deltas.join('')).toBe(final.output_text);
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('function-call round trip (streamed call, then function_call_output)', async () => {
    const first = await client.responses.stream({ model, input: 'What is the weather?', tools: [weather] }).finalResponse();
    const call = functionCall(first);
    expect(call.name).toBe('get_weather');
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
    const history: ResponseInputItem[] = [
      { role: 'user', content: 'What is the weather?' },
      { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21C' },
    ];
    const second = await client.responses.create({ model, input: history, tools: [weather], store: false });
    expect(second.output_text).toBe('Tool said: sunny, 21C');
  });
});

describe('native pass-through', () => {
  it('forwards the body with only model rewritten and relays reasoning with encrypted_content', async () => {
    ups.native.options.reasoningTokens = 9;
    ups.native.options.cachedTokens = 4;
    try {
      const body = {
        model: MODEL.native,
        input: 'think hard',
        include: ['reasoning.encrypted_content'] as const,
        reasoning: { effort: 'high' as const, summary: 'auto' as const },
        store: false,
        prompt_cache_key: 'conv-1',
        user: 'someone',
      };
      const final = await client.responses.stream({ ...body, include: [...body.include] }).finalResponse();
      const sent = ups.native.requests.at(-1)!.body as Record<string, unknown>;
      expect(sent).toMatchObject({ model: MODEL.native, prompt_cache_key: 'conv-1', include: ['reasoning.encrypted_content'], reasoning: { effort: 'high', summary: 'auto' }, stream: true });
      expect(sent.user).toBeUndefined();
      const reasoning = final.output[0];
      expect(reasoning.type).toBe('reasoning');
      expect((reasoning as { encrypted_content?: string }).encrypted_content).toMatch(/^gAAAAB/);
      expect(final.usage).toMatchObject({ input_tokens_details: { cached_tokens: 4 }, output_tokens_details: { reasoning_tokens: 9 } });
    } finally {
      ups.native.options.reasoningTokens = undefined;
      ups.native.options.cachedTokens = undefined;
    }
  });

  it('previous_response_id goes through to a native upstream', async () => {
    await client.responses.create({ model: MODEL.native, input: 'again', previous_response_id: 'resp_abc' });
    expect((ups.native.requests.at(-1)!.body as Record<string, unknown>).previous_response_id).toBe('resp_abc');
  });

  it('an input item newer than the gateway (Codex: additional_tools) goes through to a native upstream as sent', async () => {
    const newer = { type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'shell' }] };
    const input = [newer, { type: 'message', role: 'user', content: 'hi' }] as unknown as Parameters<typeof client.responses.create>[0]['input'];
    const r = await client.responses.create({ model: MODEL.native, input });
    expect(r.status).toBe('completed');
    expect((ups.native.requests.at(-1)!.body as { input: unknown[] }).input[0]).toEqual(newer);
    // To a provider the gateway translates for, it is a 400 naming the item: nothing would carry it.
    const err = await apiError(client.responses.create({ model: MODEL.chat, input }));
    expect(err.status).toBe(400);
    expect((err.error as { param?: string }).param).toBe('input[0].type');
    expect(err.message).toMatch(/additional_tools/);
  });
});

describe('bridge', () => {
  it('refuses previous_response_id with a clear 400 when no candidate speaks Responses', async () => {
    const err = await apiError(client.responses.create({ model: MODEL.chat, input: 'hi', previous_response_id: 'resp_x' }));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/previous_response_id/);
    expect((err.error as { param?: string }).param).toBe('previous_response_id');
  });

  it('drops built-in tools and says so in a header', async () => {
    const { response } = await client.responses.create({ model: MODEL.chat, input: 'hi', tools: [{ type: 'web_search' }] }).withResponse();
    expect(response.headers.get('x-gateway-dropped-tools')).toBe('web_search');
    const sent = ups.chat.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent.tools).toBeUndefined();
  });

  it('sends instructions as a system message and max_output_tokens as the upstream limit', async () => {
    const r = await client.responses.create({ model: MODEL.chat, input: 'one two three four five six', instructions: 'Sys prompt', max_output_tokens: 3 });
    const sent = ups.chat.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }>; max_completion_tokens?: number; max_tokens?: number };
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Sys prompt' });
    expect(sent.max_completion_tokens ?? sent.max_tokens).toBe(3);
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details?.reason).toBe('max_output_tokens');
  });
});

describe('errors', () => {
  it('a missing model is a 400 in the OpenAI envelope', async () => {
    const res = await fetch(`${t.baseUrl}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hi' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string; type: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'model', code: 'missing_parameter' });
    // A field of the wrong type: invalid_type naming what it takes, as on chat (DESIGN's error table).
    const wrong = await fetch(`${t.baseUrl}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 5 }),
    });
    expect(wrong.status).toBe(400);
    const wrongBody = (await wrong.json()) as { error: { message: string } };
    expect(wrongBody.error).toMatchObject({ type: 'invalid_request_error', param: 'input', code: 'invalid_type' });
    expect(wrongBody.error.message).toMatch(/expected string or array, but got number/);
  });

  it('an unknown model is a 404 model_not_found', async () => {
    const err = await apiError(client.responses.create({ model: 'no-such-model', input: 'hi' }));
    expect(err.status).toBe(404);
    expect(err.code).toBe('model_not_found');
  });

  it('a bad key is a 401', async () => {
    const err = await apiError(t.client({ apiKey: 'sk-gw-wrong' }).responses.create({ model: MODEL.chat, input: 'hi' }));
    expect(err.status).toBe(401);
  });
});
