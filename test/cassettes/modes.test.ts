/**
 * The three modes and where they are chosen: `replay-or-record` replays what it has and forwards and
 * records the rest (including one more identical request than was recorded); `record` replaces a
 * request's old answers on its first new recording; a key's own cassette (`gateway keys update NAME
 * --cassette replay:DIR`, live on a running gateway) applies to that key only; an answer that failed
 * after its 200 (a stream cut by the upstream) is never recorded; a request that is not JSON is the
 * handler's to refuse and is never recorded.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cassetteFileName } from '../../core/cassettes/format.ts';
import { canonicalRequest } from '../../core/cassettes/canonical.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { runCli } from '../support/cli.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import { auditRow } from '../support/call-checks.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { cassetteGateway, cassetteTexts, startUpstreams, tempDir } from './rig.ts';
import type { Upstreams } from './rig.ts';

const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });

function answersIn(dir: string, body: ReturnType<typeof ask>): Array<{ status: number; json?: { id: string } }> {
  const req = canonicalRequest('/v1/chat/completions', 'application/json', Buffer.from(JSON.stringify(body)))!;
  return (JSON.parse(readFileSync(path.join(dir, cassetteFileName(req)), 'utf8')) as { interactions: Array<{ status: number; json?: { id: string } }> }).interactions;
}

let up: Upstreams;
beforeAll(async () => {
  up = await startUpstreams();
});
afterAll(async () => {
  await up.close();
});

describe('replay-or-record', () => {
  const c = tempDir('gw-ror-');
  let t: TestGateway;
  beforeAll(async () => {
    t = await cassetteGateway(up, { mode: 'replay-or-record', dir: c.dir });
  });
  afterAll(async () => {
    await t.close();
    c.cleanup();
  });

  it('forwards and records a miss, replays it afterwards, and records one more identical call than it holds', async () => {
    const before = up.chat.requests.length;
    const first = await t.client().chat.completions.create(ask('ror one'));
    expect(up.chat.requests.length).toBe(before + 1);
    // In this run the request was already answered once: a second identical call is new, so it is forwarded too.
    const second = await t.client().chat.completions.create(ask('ror one'));
    expect(up.chat.requests.length).toBe(before + 2);
    expect(second.id).not.toBe(first.id);
    expect(answersIn(c.dir, ask('ror one')).map((i) => i.json?.id)).toEqual([first.id, second.id]);

    // A new gateway on the same cassette replays both in order, then records a third.
    const again = await cassetteGateway(up, { mode: 'replay-or-record', dir: c.dir });
    try {
      const a = await again.client().chat.completions.create(ask('ror one')).withResponse();
      expect(a.data.id).toBe(first.id);
      expect(a.response.headers.get('x-gateway-replayed')).toBe('true');
      expect((await again.client().chat.completions.create(ask('ror one'))).id).toBe(second.id);
      expect(up.chat.requests.length).toBe(before + 2);
      const third = await again.client().chat.completions.create(ask('ror one'));
      expect(up.chat.requests.length).toBe(before + 3);
      expect(answersIn(c.dir, ask('ror one')).map((i) => i.json?.id)).toEqual([first.id, second.id, third.id]);
    } finally {
      await again.close();
    }
  });

  it('does not record an answer that failed after its 200, nor a body that is not JSON', async () => {
    up.chat.queueFault({ kind: 'reset-after-chunks', chunks: 2 });
    const stream = await t.client().chat.completions.create({ ...ask('cut short'), stream: true });
    await expect(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    ).rejects.toThrow();
    const bad = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(bad.status).toBe(400);
    const names = cassetteTexts(c.dir).map((f) => f.text);
    expect(names.some((text) => text.includes('cut short'))).toBe(false);
    expect(names.some((text) => text.includes('not json'))).toBe(false);
  });
});

describe('replay', () => {
  it('contacts no provider at all, not even for its model list at start', async () => {
    const c = tempDir('gw-rep-');
    const watch = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
    try {
      // No fixed model list: a normal start would ask the provider for it.
      const t = await startTestGateway({
        settings: { cassettes: { mode: 'replay', dir: c.dir } },
        providers: [{ name: 'lister', type: 'openai', baseUrl: watch.url, secret: 'sk-lister-0123456789abcdef' }],
      });
      await t.close();
      const normal = await startTestGateway({ providers: [{ name: 'lister', type: 'openai', baseUrl: watch.url, secret: 'sk-lister-0123456789abcdef' }] });
      await normal.close();
      expect(watch.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models']);
    } finally {
      await watch.close();
      c.cleanup();
    }
  });
});

describe('record', () => {
  it('the first recording of a request in a run replaces its old answers', async () => {
    const c = tempDir('gw-rec-');
    try {
      for (const run of [1, 2]) {
        const t = await cassetteGateway(up, { mode: 'record', dir: c.dir });
        try {
          await t.client().chat.completions.create(ask('re-record me'));
          await t.client().chat.completions.create(ask('re-record me'));
          expect(answersIn(c.dir, ask('re-record me')), `run ${run}`).toHaveLength(2);
        } finally {
          await t.close();
        }
      }
    } finally {
      c.cleanup();
    }
  });
});

describe('a key with its own cassette', () => {
  const c = tempDir('gw-key-');
  let t: TestGateway;
  beforeAll(async () => {
    t = await cassetteGateway(up, null, [{ name: 'ci' }, { name: 'dev' }]);
  });
  afterAll(async () => {
    await t.close();
    c.cleanup();
  });

  it('`keys update NAME --cassette MODE:DIR` applies to that key only, live, and `--no-cassette` clears it', async () => {
    const ci = t.client({ apiKey: t.keys.ci });
    const dev = t.client({ apiKey: t.keys.dev });
    const set = await runCli(['keys', 'update', 'ci', '--cassette', `record:${c.dir}`], { home: t.home });
    expect(set.code).toBe(0);
    const listed = await runCli(['keys', 'list', '--json'], { home: t.home });
    expect((JSON.parse(listed.stdout) as Array<{ name: string; cassette: string | null }>).find((k) => k.name === 'ci')?.cassette).toBe(`record:${c.dir}`);
    await waitUntil(() => t.gw.deps.live.keysByHash.size > 0 && [...t.gw.deps.live.keysByHash.values()].some((k) => k.cassette !== null));

    const recorded = await ci.chat.completions.create(ask('per key'));
    await dev.chat.completions.create(ask('only dev'));
    const texts = cassetteTexts(c.dir)
      .map((f) => f.text)
      .join('\n');
    expect(texts).toContain('per key');
    expect(texts).not.toContain('only dev');

    expect((await runCli(['keys', 'update', 'ci', '--cassette', `replay:${c.dir}`], { home: t.home })).code).toBe(0);
    await waitUntil(() => [...t.gw.deps.live.keysByHash.values()].some((k) => k.cassette?.startsWith('replay:')));
    const before = up.chat.requests.length;
    const { data, response } = await ci.chat.completions.create(ask('per key')).withResponse();
    expect(data.id).toBe(recorded.id);
    expect(up.chat.requests.length).toBe(before);
    expect((await auditRow(t, response.headers.get('x-request-id'))).replayed).toBe(true);
    // The other key still reaches the provider.
    await dev.chat.completions.create(ask('per key'));
    expect(up.chat.requests.length).toBe(before + 1);

    const bad = await runCli(['keys', 'update', 'ci', '--cassette', 'rewind:/tmp'], { home: t.home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('MODE:DIR');
    expect((await runCli(['keys', 'update', 'ci', '--no-cassette'], { home: t.home })).code).toBe(0);
    await waitUntil(() => [...t.gw.deps.live.keysByHash.values()].every((k) => k.cassette === null));
    await ci.chat.completions.create(ask('per key'));
    expect(up.chat.requests.length).toBe(before + 2);
  });
});

async function waitUntil(cond: () => boolean): Promise<void> {
  const until = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met within 5 s');
    await new Promise((r) => setTimeout(r, 25));
  }
}
