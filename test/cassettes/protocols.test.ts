/**
 * The Anthropic Messages and OpenAI Responses protocols under record and replay, with their official
 * SDKs: recorded through fake upstreams (Anthropic; a native OpenAI Responses one), replayed with the
 * upstreams stopped: the same messages, the same stream events (named SSE events included), the same
 * Responses objects and event sequences. Nothing here is specific to those routes: the cassette layer
 * wraps every model-call route by its endpoint path.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startOpenAIResponsesUpstream } from '../fakes/openai-responses-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import type { CassetteMode } from '../../core/cassettes/mode.ts';
import { cassetteTexts, tempDir } from './rig.ts';

const CLAUDE = 'claude-sonnet-4-6';
const CODEX = 'gpt-5-codex';
const ANT_SECRET = 'test-ant-cassette-0123456789';
const OA_SECRET = 'sk-responses-cassette-0123456789';

function gateway(ant: FakeUpstream, oa: FakeUpstream, mode: CassetteMode, dir: string): Promise<TestGateway> {
  return startTestGateway({
    settings: { cassettes: { mode, dir } },
    providers: [
      { name: 'an', type: 'anthropic', baseUrl: ant.url, secret: ANT_SECRET, models: [CLAUDE] },
      { name: 'oa', type: 'openai', baseUrl: oa.url, secret: OA_SECRET, models: [CODEX] },
    ],
  });
}

interface Answers {
  message: unknown;
  messageEvents: unknown[];
  response: unknown;
  responseEvents: unknown[];
}

async function exercise(t: TestGateway): Promise<Answers> {
  const anthropic = new Anthropic({ apiKey: t.key, baseURL: t.gw.url, maxRetries: 0 });
  const message = await anthropic.messages.create({
    model: CLAUDE,
    max_tokens: 50,
    messages: [{ role: 'user', content: 'hello claude' }],
    metadata: { user_id: `session-${Math.random()}` },
  });
  const messageEvents: unknown[] = [];
  for await (const e of await anthropic.messages.create({ model: CLAUDE, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'stream claude' }] }))
    messageEvents.push(e);
  const openai = t.client();
  const response = await openai.responses.create({ model: CODEX, input: 'hello codex', prompt_cache_key: `conv-${Math.random()}` });
  const responseEvents: unknown[] = [];
  for await (const e of await openai.responses.create({ model: CODEX, input: 'stream codex', stream: true })) responseEvents.push(e);
  return { message, messageEvents, response, responseEvents };
}

describe('Messages and Responses: record, stop the upstreams, replay', () => {
  const cassette = tempDir('gw-proto-cassette-');
  let recorded: Answers;
  let recorderKey = '';

  beforeAll(async () => {
    const ant = await startAnthropicUpstream({ models: [CLAUDE] });
    const oa = await startOpenAIResponsesUpstream({ models: [CODEX] });
    const t = await gateway(ant, oa, 'record', cassette.dir);
    recorderKey = t.key;
    try {
      recorded = await exercise(t);
    } finally {
      await t.close();
      await ant.close();
      await oa.close();
    }
  }, 60_000);
  afterAll(() => cassette.cleanup());

  it('replays both protocols identically, streams included, contacting no provider', async () => {
    expect(recorded.messageEvents.length).toBeGreaterThan(3);
    expect(recorded.responseEvents.length).toBeGreaterThan(3);
    const files = cassetteTexts(cassette.dir)
      .filter((f) => !f.name.startsWith('.'))
      .map((f) => f.name);
    expect(files.filter((f) => f.startsWith('v1.messages--'))).toHaveLength(2);
    expect(files.filter((f) => f.startsWith('v1.responses--'))).toHaveLength(2);
    const ant = await startAnthropicUpstream({ models: [CLAUDE] });
    const oa = await startOpenAIResponsesUpstream({ models: [CODEX] });
    const t = await gateway(ant, oa, 'replay', cassette.dir);
    try {
      expect(await exercise(t)).toEqual(recorded);
      expect(ant.requests).toHaveLength(0);
      expect(oa.requests).toHaveLength(0);
      // Anthropic's `request-id` is this call's own (the audit row's), as `x-request-id` is: a cassette keeps neither.
      const replayed = await fetch(`${t.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': t.key, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'hello claude' }] }),
      });
      expect(replayed.status).toBe(200);
      expect(replayed.headers.get('request-id')).toBe(replayed.headers.get('x-request-id'));
      await replayed.body?.cancel();
      for (const f of cassetteTexts(cassette.dir)) expect(f.text).not.toContain('"request-id"');
      // A miss on /v1/messages is in Anthropic's envelope, and the SDK does not retry it.
      const anthropic = new Anthropic({ apiKey: t.key, baseURL: t.gw.url, maxRetries: 2 });
      const err = await anthropic.messages.create({ model: CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'never' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.NotFoundError);
      expect(String((err as Error).message)).toContain('cassette_miss');
    } finally {
      await t.close();
      await ant.close();
      await oa.close();
    }
    const all = cassetteTexts(cassette.dir)
      .map((f) => f.text)
      .join('\n');
    for (const s of [recorderKey, ANT_SECRET, OA_SECRET]) expect(all).not.toContain(s);
  });
});
