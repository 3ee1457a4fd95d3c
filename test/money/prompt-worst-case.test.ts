/**
 * What a call's prompt is, for the budget's worst case: providers bill tool definitions and the tool calls
 * in the history as prompt, so admission counts them too, on chat, Responses and Messages alike. A key whose
 * budget cannot pay for a coding agent's tool schemas is refused before the call, not charged many times its
 * budget after it; the same prompt without them is served. With two output caps, the larger is reserved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

// At $0.15 per million input tokens, ~12,000 tokens of tool schema cost ~$0.0018.
const BUDGET = 0.0005;
const bigTool = (name: string) => ({
  type: 'function' as const,
  function: { name, description: `${name}: `.padEnd(24_000, 'describe every parameter at length '), parameters: { type: 'object', properties: { path: { type: 'string' } } } },
});
const TOOLS = [bigTool('read_file'), bigTool('write_file')];

let up: FakeUpstream;
let t: TestGateway;
beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  // An OpenAI-compatible provider, so /v1/responses is translated to chat (the fake speaks chat), at gpt-4o-mini's list price.
  t = await startTestGateway({
    providers: [{ name: 'oa', type: 'openai-compatible', baseUrl: up.url, secret: 'sk-prompt-worst-0123456789', models: ['gpt-4o-mini'] }],
    keys: [{ name: 'agent', budgetUsd: BUDGET }],
  });
  const store = t.openStore();
  try {
    store.prices.set('gpt-4o-mini', { inputPerMtok: 0.15, outputPerMtok: 0.6 });
  } finally {
    store.close();
  }
  t.gw.deps.live.reloadIfChanged();
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

const status = (p: Promise<unknown>): Promise<number> => p.then(() => 200, (e: unknown) => (e as { status?: number }).status ?? -1);

describe('the prompt a budget reserves for', () => {
  it('chat: tool definitions count, and tool calls in the history', async () => {
    const client = t.client();
    const messages = [{ role: 'user' as const, content: 'list the files' }];
    expect(await status(client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 1, messages }))).toBe(200);
    expect(await status(client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 1, messages, tools: TOOLS }))).toBe(402);
    const history = [
      ...messages,
      { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'write_file', arguments: JSON.stringify({ text: 'x'.repeat(48_000) }) } }] },
      { role: 'tool' as const, tool_call_id: 'c1', content: 'ok' },
    ];
    expect(await status(client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 1, messages: history }))).toBe(402);
    // Both output caps go upstream as sent, and an upstream may honour either: the larger is reserved.
    expect(await status(client.chat.completions.create({ model: 'gpt-4o-mini', max_completion_tokens: 1, max_tokens: 100_000, messages }))).toBe(402);
    expect(await status(client.chat.completions.create({ model: 'gpt-4o-mini', max_completion_tokens: 1, max_tokens: 2, messages }))).toBe(200);
  });

  it('Responses: tool definitions count', async () => {
    const client = t.client();
    const tools = TOOLS.map((x) => ({ type: 'function' as const, name: x.function.name, description: x.function.description, parameters: x.function.parameters, strict: false }));
    expect(await status(client.responses.create({ model: 'gpt-4o-mini', max_output_tokens: 16, input: 'list the files' }))).toBe(200);
    expect(await status(client.responses.create({ model: 'gpt-4o-mini', max_output_tokens: 16, input: 'list the files', tools }))).toBe(402);
  });

  it('Responses: a response schema counts', async () => {
    const client = t.client();
    const schema = { type: 'object', description: 'describe every field at length '.repeat(1_500), properties: { files: { type: 'array', items: { type: 'string' } } } };
    const format = (s: Record<string, unknown>) => ({ format: { type: 'json_schema' as const, name: 'files', schema: s, strict: false } });
    expect(await status(client.responses.create({ model: 'gpt-4o-mini', max_output_tokens: 16, input: 'list the files', text: format({ type: 'object' }) }))).toBe(200);
    expect(await status(client.responses.create({ model: 'gpt-4o-mini', max_output_tokens: 16, input: 'list the files', text: format(schema) }))).toBe(402);
  });

  it('Messages: tool definitions count', async () => {
    const client = new Anthropic({ apiKey: t.key, baseURL: t.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    const tools = TOOLS.map((x) => ({ name: x.function.name, description: x.function.description, input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } }));
    const messages = [{ role: 'user' as const, content: 'list the files' }];
    expect(await status(client.messages.create({ model: 'gpt-4o-mini', max_tokens: 1, messages }))).toBe(200);
    expect(await status(client.messages.create({ model: 'gpt-4o-mini', max_tokens: 1, messages, tools }))).toBe(402);
  });
});
