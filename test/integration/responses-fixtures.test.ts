/**
 * The requests the real Codex sent (recorded by test/integration/codex-agent.test.ts into test/fixtures/codex) replayed
 * through the gateway to each upstream kind: the OpenAI SDK's strict stream accumulator must accept the
 * answer, and each upstream must receive a request it can serve (tool outputs paired with their calls,
 * built-in and namespace tools left out of translated calls).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIResponsesUpstream } from '../fakes/openai-responses-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/codex');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ name: f, body: JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown> }));

type Kind = 'native' | 'chat' | 'anthropic' | 'gemini';
const MODEL: Record<Kind, string> = { native: 'gpt-5-codex', chat: 'deepseek-chat', anthropic: 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' };
const ups = {} as Record<Kind, FakeUpstream>;
let t: TestGateway;

beforeAll(async () => {
  ups.native = await startOpenAIResponsesUpstream({ models: [MODEL.native] });
  ups.chat = await startOpenAIUpstream({ models: [MODEL.chat] });
  ups.anthropic = await startAnthropicUpstream({ models: [MODEL.anthropic] });
  ups.gemini = await startGeminiUpstream({ models: [MODEL.gemini] });
  t = await startTestGateway({
    providers: [
      { name: 'oa', type: 'openai', baseUrl: ups.native.url, secret: 'sk-fx-native-0123456789', models: [MODEL.native] },
      { name: 'ds', type: 'openai-compatible', baseUrl: ups.chat.url, secret: 'sk-fx-chat-0123456789', models: [MODEL.chat] },
      { name: 'an', type: 'anthropic', baseUrl: ups.anthropic.url, secret: 'test-fx-ant-0123456789', models: [MODEL.anthropic] },
      { name: 'ge', type: 'gemini', baseUrl: ups.gemini.url, secret: 'test-fx-gem-0123456789', models: [MODEL.gemini] },
    ],
  });
});
afterAll(async () => {
  await t?.close();
  for (const u of Object.values(ups)) await u?.close();
});

describe('recorded Codex requests', () => {
  it('were recorded', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(2);
    expect(fixtures.some((f) => JSON.stringify(f.body.input).includes('function_call_output'))).toBe(true);
  });

  for (const f of fixtures) {
    describe.each(Object.keys(MODEL) as Kind[])(`${f.name} → %s`, (kind) => {
      it('streams an answer the SDK accepts, and the upstream gets a servable request', async () => {
        const client = t.client();
        const body = { ...f.body, model: MODEL[kind] } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming;
        const final = await client.responses.stream(body).finalResponse();
        expect(final.status).toBe('completed');
        expect(final.output.length).toBeGreaterThan(0);
        expect(final.usage?.total_tokens).toBeGreaterThan(0);
        const sent = ups[kind].requests.at(-1)!.body as Record<string, unknown>;
        if (kind === 'native') {
          // Pass-through: the body as Codex sent it, model aside.
          expect({ ...sent, model: f.body.model }).toEqual(f.body);
        } else if (kind === 'chat') {
          const messages = sent.messages as Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
          const callIds = messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
          const resultIds = messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
          expect(resultIds).toEqual(callIds);
          const names = ((sent.tools ?? []) as Array<{ function: { name: string } }>).map((x) => x.function.name);
          expect(names).toContain('exec_command');
          expect(names).not.toContain('web_search');
        }
      });
    });
  }
});
