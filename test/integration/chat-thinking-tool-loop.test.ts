/**
 * A chat client's agent loop with `reasoning_effort` on an Anthropic provider. The first turn thinks and calls a
 * tool; the second hands the tool result back. Chat has no field for Anthropic's thinking signature, so the
 * assistant turn comes back without its signed thinking block, and Anthropic refuses such a turn with thinking
 * on. The gateway sends that turn without thinking rather than fail every second step of the loop (the fake
 * upstream applies Anthropic's rule, with its wording).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let up: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  up = await startAnthropicUpstream({
    models: ['claude-sonnet-4-5'],
    thinking: { text: 'I should look at the files.', signature: 'sig-issued-by-the-fake' },
    toolCall: { name: 'list_files', arguments: { path: '.' } },
  });
  t = await startTestGateway({ providers: [{ name: 'claude', type: 'anthropic', baseUrl: up.url, models: ['claude-sonnet-4-5'], secret: 'sk-ant-thinking-0123456789' }] });
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

const tools = [{ type: 'function' as const, function: { name: 'list_files', description: 'List files', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

it('the turn after a tool call goes without thinking, and the loop goes on', async () => {
  const client = t.client();
  const first = await client.chat.completions.create({ model: 'claude-sonnet-4-5', max_tokens: 4096, reasoning_effort: 'low', tools, messages: [{ role: 'user', content: 'what is here?' }] });
  const call = first.choices[0].message.tool_calls?.[0];
  expect(call?.type).toBe('function');
  expect((up.requests.at(-1)!.body as { thinking?: unknown }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });

  const second = await client.chat.completions.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 4096,
    reasoning_effort: 'low',
    tools,
    messages: [
      { role: 'user', content: 'what is here?' },
      { role: 'assistant', content: null, tool_calls: first.choices[0].message.tool_calls },
      { role: 'tool', tool_call_id: call!.id, content: 'README.md' },
    ],
  });
  expect(second.choices[0].finish_reason).toBe('stop');
  expect((up.requests.at(-1)!.body as { thinking?: unknown }).thinking).toBeUndefined();

  // A fresh question, after the loop ended in text, thinks again.
  await client.chat.completions.create({ model: 'claude-sonnet-4-5', max_tokens: 4096, reasoning_effort: 'low', messages: [{ role: 'user', content: 'and now?' }] });
  expect((up.requests.at(-1)!.body as { thinking?: unknown }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
});
