/**
 * Record through fake upstreams with the official `openai` Node SDK, stop the upstreams, replay from
 * the cassette: every answer is identical (ids, content, usage and cost), streams included (the same
 * SSE text, the same writes), on every OpenAI endpoint: chat (JSON and stream), legacy completions
 * (JSON and stream), embeddings, images and audio. Identical requests replay in recording order. A
 * miss fails at once with the documented 404 `cassette_miss` that the SDK does not retry, and no
 * provider is contacted. A replay is free and its audit row says it was replayed. The cassette holds
 * no secret.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCalls } from '../../core/storage/audit-queries.ts';
import { spendForKey } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { apiError, auditRow } from '../support/call-checks.ts';
import { CHAT_SECRET, EXTRA_SECRET, cassetteGateway, cassetteTexts, startUpstreams, tempDir } from './rig.ts';
import type { Upstreams } from './rig.ts';
import { dbOf } from '../support/sqlite-db.ts';

const AUDIO = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0d, 0x0a])]);
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'tell me about cassettes' }], max_tokens: 20 };

interface Answers {
  chat: unknown;
  chatAgain: unknown;
  chatStream: unknown[];
  rawStream: string;
  completion: unknown;
  completionStream: unknown[];
  embedding: unknown;
  image: unknown;
  transcription: unknown;
  transcriptionText: unknown;
  costHeader: string | null;
}

/** The same calls, in the same order, against whatever gateway `t` is. */
async function exercise(t: TestGateway): Promise<Answers> {
  const c = t.client();
  const { data: chat, response } = await c.chat.completions.create({ ...CHAT, user: 'run-1', metadata: { run: String(Math.random()) }, store: false }).withResponse();
  // Same request again (keys in another order, another `user`): the fake gives it another id.
  const chatAgain = await c.chat.completions.create({ max_tokens: 20, messages: CHAT.messages, model: 'gpt-4o-mini', user: 'run-2', store: false });
  const chatStream: unknown[] = [];
  for await (const ch of await c.chat.completions.create({ ...CHAT, stream: true, stream_options: { include_usage: true } })) chatStream.push(ch);
  const raw = await fetch(`${t.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...CHAT, stream: true, messages: [{ role: 'user', content: 'raw bytes please' }] }),
  });
  const rawStream = await raw.text();
  const completion = await c.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', max_tokens: 7 });
  const completionStream: unknown[] = [];
  for await (const ch of await c.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Stream a test', max_tokens: 7, stream: true })) completionStream.push(ch);
  const embedding = await c.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] });
  const image = await c.images.generate({ model: 'gpt-image-1', prompt: 'a cassette tape' });
  const transcription = await c.audio.transcriptions.create({ file: await toFile(AUDIO, 'clip.wav'), model: 'gpt-4o-transcribe', language: 'en' });
  const transcriptionText = await c.audio.transcriptions.create({ file: await toFile(AUDIO, 'clip.wav'), model: 'whisper-1', response_format: 'text' });
  return {
    chat,
    chatAgain,
    chatStream,
    rawStream,
    completion,
    completionStream,
    embedding,
    image,
    transcription,
    transcriptionText,
    costHeader: response.headers.get('x-gateway-cost-usd'),
  };
}

describe('record, stop the upstreams, replay (Node SDK)', () => {
  const cassette = tempDir('gw-cassette-');
  let up: Upstreams;
  let recorder: TestGateway;
  let recorded: Answers;
  const recorderKeys: string[] = [];

  beforeAll(async () => {
    up = await startUpstreams();
    recorder = await cassetteGateway(up, { mode: 'record', dir: cassette.dir });
    recorderKeys.push(recorder.key);
    recorded = await exercise(recorder);
    await recorder.close();
    await up.close();
  }, 60_000);
  afterAll(() => cassette.cleanup());

  it('recorded real answers, one file per distinct request', () => {
    expect((recorded.chat as { id: string }).id).not.toBe((recorded.chatAgain as { id: string }).id);
    expect(recorded.costHeader).toMatch(/^0\.\d+$/);
    const files = cassetteTexts(cassette.dir).filter((f) => !f.name.startsWith('.'));
    // chat (twice in one file), chat stream, raw stream, completion, its stream, embeddings, image, two transcriptions.
    expect(files).toHaveLength(9);
    const chatFile = files.find((f) => f.name.startsWith('v1.chat.completions--gpt-4o-mini--') && f.text.includes('"stream": true') === false);
    expect(chatFile).toBeDefined();
    const parsed = JSON.parse(chatFile!.text) as { interactions: unknown[]; request: Record<string, unknown> };
    expect(parsed.interactions).toHaveLength(2);
    // Volatile fields are not part of the match, nor stored.
    expect(parsed.request.user).toBeUndefined();
    expect(parsed.request.metadata).toBeUndefined();
    expect(Object.keys(parsed.request)).toEqual([...Object.keys(parsed.request)].sort());
  });

  describe('replay', () => {
    let watch: Upstreams;
    let player: TestGateway;
    beforeAll(async () => {
      // Live upstreams at new addresses: any call the replay leaks is counted here.
      watch = { chat: await startOpenAIUpstream({ models: ['gpt-4o-mini', 'text-embedding-3-small'] }), extra: await startOpenAIExtraUpstream(), close: async () => {} };
      player = await cassetteGateway(watch, { mode: 'replay', dir: cassette.dir }, [
        { name: 'ci', budgetUsd: 0.000001 },
        { name: 'embed-only', models: ['text-embedding-3-small'] },
      ]);
    }, 60_000);
    afterAll(async () => {
      await player.close();
      await watch.chat.close();
      await watch.extra.close();
    });

    it('answers every call identically, streams included, contacting no provider', async () => {
      const replayed = await exercise(player);
      expect(replayed).toEqual(recorded);
      expect(watch.chat.requests).toHaveLength(0);
      expect(watch.extra.requests).toHaveLength(0);
    });

    it('keeps the stream chunk boundaries as they were written', () => {
      const file = cassetteTexts(cassette.dir).find((f) => f.text.includes('raw bytes please'));
      const chunks = (JSON.parse(file!.text) as { interactions: Array<{ chunks: string[] }> }).interactions[0].chunks;
      // The gateway writes once per upstream read (the events of one read together), so a chunk holds
      // one or more whole events: never an event cut in two.
      expect(chunks.length).toBeGreaterThanOrEqual(1);
      expect(chunks.every((c) => c.startsWith('data: ') && c.endsWith('\n\n'))).toBe(true);
      expect(chunks.join('')).toBe(recorded.rawStream);
    });

    it("a stream without a usage chunk still says what it cost (from the recorded call's audit row)", async () => {
      const file = cassetteTexts(cassette.dir).find((f) => f.text.includes('raw bytes please'));
      const cost = (JSON.parse(file!.text) as { interactions: Array<{ cost_usd: number | null }> }).interactions[0].cost_usd;
      expect(cost).toBeGreaterThan(0);
      const res = await fetch(`${player.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${player.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...CHAT, stream: true, messages: [{ role: 'user', content: 'raw bytes please' }] }),
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('x-gateway-replayed')).toBe('true');
      expect(Number(res.headers.get('x-gateway-cost-usd'))).toBeCloseTo(cost!, 12);
      expect(await res.text()).toBe(recorded.rawStream);
    });

    it('is free, says what it would have cost, and the audit row is marked replayed', async () => {
      const { data, response } = await player
        .client()
        .chat.completions.create({ ...CHAT, user: 'someone-else', store: false })
        .withResponse();
      expect(response.headers.get('x-gateway-replayed')).toBe('true');
      expect(response.headers.get('x-gateway-cost-usd')).toBe(recorded.costHeader);
      expect((data.usage as unknown as { cost: number }).cost).toBe(Number(recorded.costHeader));
      const row = await auditRow(player, response.headers.get('x-request-id'));
      expect(row).toMatchObject({ replayed: true, costUsd: 0, status: 200, endpoint: '/v1/chat/completions', modelRequested: 'gpt-4o-mini', provider: 'oa', attempts: 0 });
      expect(row.inputTokens).toBeGreaterThan(0);
      // The key's budget ($0.000001) is untouched: replays spend nothing, so they keep being served.
      expect(spendForKey(dbOf(player.gw), row.keyId!)).toBe(0);
    });

    it('a miss fails fast with a 404 cassette_miss the SDK does not retry, naming the request and the closest one', async () => {
      player.flush();
      const before = listCalls(dbOf(player.gw), { limit: 1000 }).length;
      const err = await apiError(player.client({ maxRetries: 3 }).chat.completions.create({ ...CHAT, store: false, messages: [{ role: 'user', content: 'never recorded' }] }));
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err.status).toBe(404);
      expect(err.code).toBe('cassette_miss');
      expect(err.type).toBe('invalid_request_error');
      expect(err.headers?.get('x-should-retry')).toBe('false');
      expect(err.message).toContain('POST /v1/chat/completions');
      expect(err.message).toContain('gpt-4o-mini');
      expect(err.message).toMatch(/sha256:[0-9a-f]{12}/);
      expect(err.message).toMatch(/Closest recorded request: v1\.chat\.completions--gpt-4o-mini--[0-9a-f]{12}\.json \(differs in messages\)/);
      player.flush();
      const rows = listCalls(dbOf(player.gw), { limit: 1000 });
      // One request reached the gateway (no SDK retry), and nothing reached a provider.
      expect(rows.length - before).toBe(1);
      expect(rows[0]).toMatchObject({ status: 404, replayed: false });
      expect(watch.chat.requests).toHaveLength(0);
    });

    it("a key's model allow-list still holds on a replay", async () => {
      const err = await apiError(player.client({ apiKey: player.keys['embed-only'] }).chat.completions.create({ ...CHAT, store: false }));
      expect(err.status).toBe(403);
      expect(err.code).toBe('model_not_allowed');
      const ok = await player.client({ apiKey: player.keys['embed-only'] }).embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] });
      expect(ok).toEqual(recorded.embedding);
    });

    it('identical requests replay in recording order, then start over', async () => {
      const c = player.client();
      const a = await c.chat.completions.create({ ...CHAT, store: false });
      const b = await c.chat.completions.create({ ...CHAT, store: false });
      // The earlier tests used both answers once (and one more): the cursor wrapped; order holds in pairs.
      const ids = [(recorded.chat as { id: string }).id, (recorded.chatAgain as { id: string }).id];
      expect(ids).toContain(a.id);
      expect(ids).toContain(b.id);
      expect(a.id).not.toBe(b.id);
    });
  });

  it('the cassette holds no secret: no local key, no provider key', () => {
    const all = cassetteTexts(cassette.dir)
      .map((f) => f.text)
      .join('\n');
    for (const secret of [...recorderKeys, CHAT_SECRET, EXTRA_SECRET]) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/sk-gw-[A-Za-z0-9]{20,}/);
    expect(all.toLowerCase()).not.toContain('authorization');
  });
});
