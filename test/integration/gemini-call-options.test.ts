/**
 * What a call asks of a Gemini provider in any protocol, where Gemini has no field of the same name:
 * - one tool call at most (chat's `parallel_tool_calls: false`, Anthropic's `disable_parallel_tool_use`):
 *   Gemini has no such switch and may answer several, so the gateway keeps the first;
 * - thinking (Anthropic's `thinking.budget_tokens`, Responses' `reasoning.effort`) becomes
 *   `thinkingConfig.thinkingBudget`, as chat's `reasoning_effort` already did.
 * Both were dropped on the way before: a client got calls it had not allowed, and a budget it had not set.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let up: FakeUpstream;
let t: TestGateway;
const MODEL = 'gemini-2.5-flash';

beforeAll(async () => {
  up = await startGeminiUpstream({ models: [MODEL], toolCall: { name: 'get_time', arguments: { zone: 'UTC' } }, parallelCalls: 2 });
  t = await startTestGateway({ providers: [{ name: 'gem', type: 'gemini', baseUrl: up.url, models: [MODEL], secret: 'gemini-call-options-0123456789' }] });
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

const chatTools = [{ type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } }];
const anthropicTools = [{ name: 'get_time', input_schema: { type: 'object' as const, properties: { zone: { type: 'string' } } } }];
const anthropic = () => new Anthropic({ apiKey: t.key, baseURL: t.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
const lastGenerationConfig = () => (up.requests.at(-1)!.body as { generationConfig?: { thinkingConfig?: unknown } }).generationConfig;

describe('one tool call at most', () => {
  it('chat: parallel_tool_calls false keeps the first call, streamed or not; without it both come', async () => {
    const client = t.client();
    const messages = [{ role: 'user' as const, content: 'what time is it?' }];
    const both = await client.chat.completions.create({ model: MODEL, tools: chatTools, messages });
    expect(both.choices[0].message.tool_calls).toHaveLength(2);
    const one = await client.chat.completions.create({ model: MODEL, tools: chatTools, parallel_tool_calls: false, messages });
    expect(one.choices[0].message.tool_calls).toHaveLength(1);
    expect(one.choices[0].finish_reason).toBe('tool_calls');
    const streamed = await client.chat.completions.stream({ model: MODEL, tools: chatTools, parallel_tool_calls: false, messages }).finalChatCompletion();
    expect(streamed.choices[0].message.tool_calls).toHaveLength(1);
  });

  it('Messages: disable_parallel_tool_use keeps the first tool_use, streamed or not', async () => {
    const params = {
      model: MODEL,
      max_tokens: 256,
      tools: anthropicTools,
      tool_choice: { type: 'auto' as const, disable_parallel_tool_use: true },
      messages: [{ role: 'user' as const, content: 'what time is it?' }],
    };
    const msg = await anthropic().messages.create(params);
    expect(msg.content.filter((b) => b.type === 'tool_use')).toHaveLength(1);
    expect(msg.stop_reason).toBe('tool_use');
    const streamed = await anthropic().messages.stream(params).finalMessage();
    expect(streamed.content.filter((b) => b.type === 'tool_use')).toHaveLength(1);
    const { tool_choice: _, ...parallel } = params;
    expect((await anthropic().messages.create(parallel)).content.filter((b) => b.type === 'tool_use')).toHaveLength(2);
  });
});

describe('thinking', () => {
  it("Messages: thinking.budget_tokens is Gemini's thinkingBudget", async () => {
    await anthropic().messages.create({ model: MODEL, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'think' }] });
    expect(lastGenerationConfig()?.thinkingConfig).toEqual({ thinkingBudget: 2000 });
  });

  it("Responses: reasoning.effort is Gemini's thinkingBudget, as chat's reasoning_effort is", async () => {
    await t.client().responses.create({ model: MODEL, reasoning: { effort: 'low' }, input: 'think' });
    expect(lastGenerationConfig()?.thinkingConfig).toEqual({ thinkingBudget: 1024 });
    await t.client().chat.completions.create({ model: MODEL, reasoning_effort: 'low', messages: [{ role: 'user', content: 'think' }] });
    expect(lastGenerationConfig()?.thinkingConfig).toEqual({ thinkingBudget: 1024 });
  });
});
