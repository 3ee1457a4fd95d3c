/**
 * Codex on a DeepSeek-style reasoner through the Responses bridge. DeepSeek's thinking mode wants the
 * `reasoning_content` of an assistant turn that made tool calls back on the next request (a 400 otherwise, which
 * the fake applies with DeepSeek's wording). The reasoning reaches the client as a `reasoning` item whose
 * `encrypted_content` carries the gateway's mark; sent back as Codex sends it, its text goes upstream as that
 * turn's `reasoning_content`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let up: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['deepseek-reasoner'], reasoningContent: 'Let me look at the files first.', toolCall: { name: 'shell', arguments: { cmd: 'ls' } } });
  t = await startTestGateway({ providers: [{ name: 'ds', type: 'openai-compatible', baseUrl: up.url, models: ['deepseek-reasoner'], secret: 'sk-ds-reasoning-0123456789' }] });
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

const tools = [{ type: 'function' as const, name: 'shell', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false }];

it.each([false, true])('the turn after a tool call brings the reasoning back (stream: %s)', async (stream) => {
  const client = t.client();
  const first: ResponseInputItem[] = [{ role: 'user', content: 'what is here?' }];
  const turn1 = stream
    ? await client.responses.stream({ model: 'deepseek-reasoner', input: first, tools, include: ['reasoning.encrypted_content'], store: false }).finalResponse()
    : await client.responses.create({ model: 'deepseek-reasoner', input: first, tools, include: ['reasoning.encrypted_content'], store: false });
  const reasoning = turn1.output.find((o) => o.type === 'reasoning');
  const call = turn1.output.find((o) => o.type === 'function_call');
  expect(reasoning?.type === 'reasoning' ? reasoning.encrypted_content : undefined).toMatch(/^gw1:/);
  expect(call?.type).toBe('function_call');

  const second: ResponseInputItem[] = [...first, ...(turn1.output as ResponseInputItem[]), { type: 'function_call_output', call_id: call?.type === 'function_call' ? call.call_id : '', output: 'README.md' }];
  const turn2 = await client.responses.create({ model: 'deepseek-reasoner', input: second, tools, include: ['reasoning.encrypted_content'], store: false });
  expect(turn2.status).toBe('completed');
  const sent = up.requests.at(-1)!.body as { messages: Array<{ role: string; tool_calls?: unknown; reasoning_content?: string }> };
  expect(sent.messages.find((m) => m.role === 'assistant' && m.tool_calls)?.reasoning_content).toBe('Let me look at the files first.');
});
