/**
 * Requests recorded from the real Claude Code (test/fixtures/claude-code) replayed through the gateway to
 * each upstream kind: Anthropic gets the body as recorded (only `model` rewritten) with its betas; OpenAI,
 * Azure and Gemini get a faithful translation (system, tools, the tool call and its result), and the
 * answer streams back as Anthropic events.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startAzureUpstream } from '../fakes/azure-upstream.ts';
import type { FakeAzure } from '../fakes/azure-upstream.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { REPO_ROOT } from '../support/cli.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

interface Fixture {
  headers: Record<string, string>;
  body: { model: string; system: Array<{ type: string; text: string }>; tools: Array<{ name: string }>; messages: Array<{ role: string; content: unknown }> } & Record<string, unknown>;
}

const load = (name: string): Fixture => JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'claude-code', `${name}.json`), 'utf8')) as Fixture;
const FIXTURES = ['first-turn', 'tool-result-turn'] as const;

let t: TestGateway;
let anthropic: FakeUpstream;
let openai: FakeUpstream;
let gemini: FakeUpstream;
let azure: FakeAzure;
let root: string;

beforeAll(async () => {
  anthropic = await startAnthropicUpstream({ models: ['claude-sonnet-4-6'] });
  openai = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  gemini = await startGeminiUpstream({ models: ['gemini-2.5-flash'] });
  azure = await startAzureUpstream({ apiKey: 'azure-upstream-secret', deployments: { 'dep-4o': 'gpt-4o' } });
  t = await startTestGateway({
    providers: [
      { name: 'claude', type: 'anthropic', baseUrl: anthropic.url, models: ['claude-sonnet-4-6'], secret: 'anthropic-upstream-secret' },
      { name: 'oai', type: 'openai', baseUrl: openai.url, models: ['gpt-4o-mini'], secret: 'openai-upstream-secret' },
      { name: 'gem', type: 'gemini', baseUrl: gemini.url, models: ['gemini-2.5-flash'], secret: 'gemini-upstream-secret' },
      { name: 'az', type: 'azure', baseUrl: azure.url, models: ['gpt-4o'], secret: 'azure-upstream-secret', options: { deployments: { 'gpt-4o': 'dep-4o' } } },
    ],
  });
  root = t.baseUrl.replace(/\/v1$/, '');
});

afterAll(async () => {
  await t?.close();
  await Promise.all([anthropic?.close(), openai?.close(), gemini?.close(), azure?.close()]);
});

async function replay(f: Fixture, model: string): Promise<string> {
  const res = await fetch(`${root}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { ...f.headers, 'content-type': 'application/json', authorization: `Bearer ${t.key}` },
    body: JSON.stringify({ ...f.body, model }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  return text;
}

const events = (sse: string): string[] => [...sse.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]).filter((e) => e !== 'ping');
const toolUseIds = (f: Fixture): string[] =>
  f.body.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; id?: string }>).filter((b) => b.type === 'tool_use').map((b) => b.id as string) : []));

describe.each(FIXTURES)('Claude Code fixture %s', (name) => {
  const f = load(name);

  it('to Anthropic: the recorded body and betas go up unchanged but for the model', async () => {
    const sse = await replay(f, 'claude-sonnet-4-6');
    expect(events(sse).at(-1)).toBe('message_stop');
    const sent = anthropic.requests.at(-1)!;
    expect(sent.body).toEqual({ ...f.body, model: 'claude-sonnet-4-6' });
    expect(sent.headers['anthropic-beta']).toBe(f.headers['anthropic-beta']);
  });

  it.each([
    ['OpenAI', 'gpt-4o-mini', () => openai],
    ['Azure', 'gpt-4o', () => azure.inner],
  ] as const)('to %s: a chat translation of system, tools and the tool round trip', async (_kind, model, fake) => {
    const sse = await replay(f, model);
    expect(events(sse)[0]).toBe('message_start');
    expect(events(sse).at(-1)).toBe('message_stop');
    const body = fake().requests.at(-1)!.body as { messages: Array<Record<string, unknown>>; tools: Array<{ type: string; function: { name: string } }>; stream: boolean; stream_options: unknown } & Record<string, unknown>;
    // System blocks joined into one system message, in order.
    expect(body.messages[0]).toEqual({ role: 'system', content: f.body.system.map((b) => b.text).join('\n') });
    expect(body.tools.map((x) => x.function.name)).toEqual(f.body.tools.map((x) => x.name));
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    for (const dropped of ['context_management', 'metadata', 'thinking', 'output_config', 'system']) expect(body).not.toHaveProperty(dropped);
    for (const id of toolUseIds(f)) {
      expect(body.messages.some((m) => m.role === 'assistant' && JSON.stringify(m.tool_calls).includes(id))).toBe(true);
      expect(body.messages.some((m) => m.role === 'tool' && m.tool_call_id === id)).toBe(true);
    }
    if (model === 'gpt-4o') expect(azure.requests.at(-1)!.headers['api-key']).toBe('azure-upstream-secret');
  });

  it('to Gemini: contents, system instruction and function declarations', async () => {
    const sse = await replay(f, 'gemini-2.5-flash');
    expect(events(sse).at(-1)).toBe('message_stop');
    const body = gemini.requests.at(-1)!.body as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }>; systemInstruction: { parts: Array<{ text: string }> }; tools: Array<{ functionDeclarations: Array<{ name: string }> }> };
    expect(body.systemInstruction.parts.map((p) => p.text).join('\n')).toContain(f.body.system[1].text.slice(0, 40));
    expect(body.tools.flatMap((x) => x.functionDeclarations.map((d) => d.name))).toEqual(f.body.tools.map((x) => x.name));
    if (toolUseIds(f).length > 0) {
      expect(body.contents.some((c) => c.role === 'model' && c.parts.some((p) => 'functionCall' in p))).toBe(true);
      expect(body.contents.some((c) => c.parts.some((p) => 'functionResponse' in p))).toBe(true);
    }
  });
});
