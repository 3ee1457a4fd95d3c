/**
 * Clients whose default calls use `POST /v1/responses`: the Vercel AI SDK's `openai(model)` and the OpenAI
 * Agents SDK in its default mode (Responses API, tracing disabled), through the gateway to a native
 * Responses upstream and to a bridged chat-only upstream, including a tool round trip run by the Agents SDK.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from '@openai/agents';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startOpenAIResponsesUpstream } from '../fakes/openai-responses-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { dbOf } from '../support/sqlite-db.ts';

const MODELS = { native: 'gpt-5-codex', bridged: 'deepseek-chat' } as const;
let native: FakeUpstream;
let chat: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  native = await startOpenAIResponsesUpstream({ models: [MODELS.native] });
  chat = await startOpenAIUpstream({ models: [MODELS.bridged] });
  t = await startTestGateway({
    providers: [
      { name: 'oa', type: 'openai', baseUrl: native.url, secret: 'sk-clients-native-0123456789', models: [MODELS.native] },
      { name: 'ds', type: 'openai-compatible', baseUrl: chat.url, secret: 'sk-clients-chat-0123456789', models: [MODELS.bridged] },
    ],
  });
  setTracingDisabled(true);
  setDefaultOpenAIClient(t.client());
});
afterAll(async () => {
  await t?.close();
  await native?.close();
  await chat?.close();
});

describe.each(Object.entries(MODELS))('%s upstream', (kind, model) => {
  it("Vercel AI SDK: the default openai(model) (Responses API), generateText and streamText", async () => {
    const openai = createOpenAI({ baseURL: t.baseUrl, apiKey: t.key });
    const before = dbOf(t.gw).prepare("SELECT COUNT(*) AS n FROM calls WHERE endpoint = '/v1/responses'");
    t.flush();
    const n0 = (before.get() as { n: number }).n;
    const g = await generateText({ model: openai(model), prompt: 'hello from ai sdk' });
    expect(g.text).toMatch(/Echo: hello from ai sdk$/);
    expect(g.usage.inputTokens).toBeGreaterThan(0);
    const s = streamText({ model: openai(model), prompt: 'streaming from ai sdk' });
    let text = '';
    for await (const part of s.textStream) text += part;
    expect(text).toMatch(/Echo: streaming from ai sdk$/);
    t.flush();
    expect((before.get() as { n: number }).n).toBe(n0 + 2);
    if (kind === 'bridged') expect(chat.requests.at(-1)!.path).toBe('/v1/chat/completions');
    else expect(native.requests.at(-1)!.path).toBe('/v1/responses');
  });

  it('OpenAI Agents SDK (default mode): an agent runs a function tool and answers from its result', async () => {
    let called: string | null = null;
    const weather = tool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        called = city;
        return `sunny in ${city}`;
      },
    });
    const agent = new Agent({ name: 'Weather', instructions: 'Answer briefly.', model, tools: [weather] });
    const result = await run(agent, 'What is the weather?');
    expect(called).toBe('Paris');
    expect(String(result.finalOutput)).toContain('sunny in Paris');
  });
});
