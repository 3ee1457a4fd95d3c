/**
 * Gemini 3 thought signatures survive a tool round trip from every front end. The fake Gemini signs its
 * function calls and refuses (400, as Gemini 3 does) a follow-up whose replayed call lacks the signature
 * it issued, so each test fails if the signature is lost on the way to the client or back.
 * Driven by the official SDKs: `openai` (chat completions and Responses) and `@anthropic-ai/sdk`.
 */
import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/fault.ts';
import { lastIssuedThoughtSignature, startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIResponsesUpstream } from '../fakes/openai-responses-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

const MODEL = 'gemini-3-pro-preview';
let gemini: FakeUpstream;
let openai: FakeUpstream;
let t: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  gemini = await startGeminiUpstream({ models: [MODEL] });
  openai = await startOpenAIResponsesUpstream({ models: ['gpt-5-codex'] });
  t = await startTestGateway({
    providers: [
      { name: 'gem', type: 'gemini', baseUrl: gemini.url, secret: 'test-gem-0123456789', models: [MODEL] },
      { name: 'oa', type: 'openai', baseUrl: openai.url, secret: 'sk-native-0123456789', models: ['gpt-5-codex'] },
    ],
  });
  client = t.client();
});
afterAll(async () => {
  await t?.close();
  await Promise.all([gemini?.close(), openai?.close()]);
});

/** The signature of the first functionCall part of the last model turn the fake received. */
function signatureSent(): unknown {
  const body = gemini.requests.at(-1)!.body as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> };
  const turn = body.contents.filter((c) => c.role === 'model').at(-1);
  return turn?.parts.find((p) => p.functionCall)?.thoughtSignature;
}

/** The signature the fake put on the function call it just answered with. */
async function lastIssuedSignature(): Promise<string> {
  const sig = lastIssuedThoughtSignature();
  if (sig === undefined) throw new Error('the fake issued no signature');
  return sig;
}

const chatTool = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

describe('OpenAI chat completions', () => {
  it.each([false, true])('stream=%s: extra_content.google.thought_signature goes out on the tool call and back to Gemini', async (stream) => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather?' }];
    let assistant: ChatCompletionMessageParam;
    if (stream) {
      const s = client.chat.completions.stream({ model: MODEL, messages, tools: [chatTool] });
      assistant = (await s.finalChatCompletion()).choices[0].message as ChatCompletionMessageParam;
    } else {
      assistant = (await client.chat.completions.create({ model: MODEL, messages, tools: [chatTool] })).choices[0].message as ChatCompletionMessageParam;
    }
    const issued = await lastIssuedSignature();
    const call = (assistant as unknown as { tool_calls: Array<Record<string, unknown>> }).tool_calls[0];
    expect(call.extra_content).toEqual({ google: { thought_signature: issued } });
    const answer = await client.chat.completions.create({
      model: MODEL,
      tools: [chatTool],
      messages: [...messages, assistant, { role: 'tool', tool_call_id: String(call.id), content: 'sunny' }],
    });
    expect(answer.choices[0].message.content).toBe('Tool said: sunny');
    expect(signatureSent()).toBe(issued);
  });

  it('a history that lost the signature is refused by Gemini 3, and the 400 reaches the client', async () => {
    const first = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'weather?' }], tools: [chatTool] });
    const call = first.choices[0].message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
    const err = await client.chat.completions
      .create({
        model: MODEL,
        tools: [chatTool],
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: call.function }] },
          { role: 'tool', tool_call_id: call.id, content: 'sunny' },
        ],
      })
      .catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(400);
  });
});

describe('Anthropic Messages', () => {
  const sdk = () => new Anthropic({ apiKey: t.key, baseURL: t.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
  const tool = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

  it.each([false, true])('stream=%s: the signature rides in the tool_use id and reaches Gemini again with the tool_result', async (stream) => {
    const params = { model: MODEL, max_tokens: 100, tools: [tool], messages: [{ role: 'user' as const, content: 'weather?' }] };
    const msg = stream ? await sdk().messages.stream(params).finalMessage() : await sdk().messages.create(params);
    const issued = await lastIssuedSignature();
    const use = msg.content.find((b) => b.type === 'tool_use');
    if (use?.type !== 'tool_use') throw new Error(`no tool_use in ${JSON.stringify(msg.content)}`);
    expect(use.input).toEqual({ city: 'Paris' });
    expect(use.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(msg.content.some((b) => b.type === 'thinking')).toBe(false);
    const answer = await sdk().messages.create({
      ...params,
      messages: [...params.messages, { role: 'assistant', content: msg.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }],
    });
    expect(answer.content).toEqual([{ type: 'text', text: 'Tool said: sunny' }]);
    expect(signatureSent()).toBe(issued);
  });
});

describe('OpenAI Responses', () => {
  const tool = { type: 'function' as const, name: 'get_weather', description: 'Weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

  it.each([false, true])('stream=%s: a reasoning item with encrypted_content carries the signature; store:false history sends it back', async (stream) => {
    const input: ResponseInputItem[] = [{ role: 'user', content: 'weather?' }];
    const params = { model: MODEL, input, tools: [tool], store: false };
    const r = stream ? await client.responses.stream(params).finalResponse() : await client.responses.create(params);
    const issued = await lastIssuedSignature();
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'function_call']);
    const reasoning = r.output[0];
    if (reasoning.type !== 'reasoning') throw new Error('unreachable');
    expect(reasoning.encrypted_content).toMatch(/^gw1:/);
    const call = r.output[1];
    if (call.type !== 'function_call') throw new Error('unreachable');
    const answer = await client.responses.create({
      ...params,
      input: [...input, ...(r.output as ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    expect(answer.output_text).toBe('Tool said: sunny');
    expect(signatureSent()).toBe(issued);
  });

  it("the gateway's signature items never reach an OpenAI upstream (it cannot decrypt them)", async () => {
    const r = await client.responses.create({ model: MODEL, input: 'weather?', tools: [tool], store: false });
    const call = r.output.find((o) => o.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    const answer = await client.responses.create({
      model: 'gpt-5-codex',
      store: false,
      tools: [tool],
      input: [{ role: 'user', content: 'weather?' }, ...(r.output as ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    expect(answer.status).toBe('completed');
    const sent = openai.requests.at(-1)!.body as { input: Array<{ type?: string }> };
    expect(sent.input.map((i) => i.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
  });
});
