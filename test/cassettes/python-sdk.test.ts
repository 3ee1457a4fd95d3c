/**
 * The official Python `openai` SDK through a recording gateway, then, with the upstreams stopped,
 * through a replaying one: every parsed answer is identical (chat, a chat stream with its usage chunk,
 * legacy completions and their stream, embeddings), and a miss raises NotFoundError (404,
 * `cassette_miss`) after exactly one request, despite the SDK's default two retries. Skips when Python
 * is missing, unless CI or GATEWAY_REQUIRE_SDKS=1 is set.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCalls } from '../../core/storage/audit-queries.ts';
import { REPO_ROOT } from '../support/cli.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { pythonWithOpenAI, run } from './python-venv.ts';
import { CHAT_SECRET, EXTRA_SECRET, cassetteGateway, cassetteTexts, startUpstreams, tempDir } from './rig.ts';
import { dbOf } from '../support/sqlite-db.ts';

const SCRIPT = path.join(REPO_ROOT, 'test', 'cassettes', 'python', 'sdk_calls.py');
const ci = process.env.CI;
const REQUIRED = (ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false') || process.env.GATEWAY_REQUIRE_SDKS === '1';

function env(t: TestGateway): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OPENAI_')) e[k] = v;
  return { ...e, OPENAI_BASE_URL: t.baseUrl, OPENAI_API_KEY: t.key, NO_PROXY: '127.0.0.1,localhost' };
}

async function python(t: TestGateway, py: string, ...args: string[]): Promise<Record<string, unknown>> {
  const r = await run(py, [SCRIPT, ...args], env(t), 60_000);
  if (r.code !== 0) throw new Error(`sdk_calls.py ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('record, stop the upstreams, replay (Python SDK)', () => {
  const cassette = tempDir('gw-py-cassette-');
  let py: string | null = null;
  let skipReason = '';
  let recorded: Record<string, unknown> = {};
  let recorderKey = '';

  beforeAll(async () => {
    const found = await pythonWithOpenAI();
    if ('missing' in found) {
      if (REQUIRED) throw new Error(found.missing);
      skipReason = found.missing;
      return;
    }
    py = found.python;
    const up = await startUpstreams();
    const t = await cassetteGateway(up, { mode: 'record', dir: cassette.dir });
    recorderKey = t.key;
    try {
      recorded = await python(t, py);
    } finally {
      await t.close();
      await up.close();
    }
  }, 300_000);
  afterAll(() => cassette.cleanup());

  it('replays every answer identically, streams included; a miss raises once, unretried', async (ctx) => {
    if (!py) return ctx.skip(skipReason);
    expect((recorded.chat_headers as { replayed: string | null }).replayed).toBeNull();
    expect((recorded.chat_stream as unknown[]).length).toBeGreaterThan(3);

    const watch = await startUpstreams();
    const t = await cassetteGateway(watch, { mode: 'replay', dir: cassette.dir });
    try {
      const replayed = await python(t, py);
      const { chat_headers: h1, ...rest1 } = recorded;
      const { chat_headers: h2, ...rest2 } = replayed;
      expect(rest2).toEqual(rest1);
      expect(h2).toEqual({ replayed: 'true', cost: (h1 as { cost: string }).cost });

      t.flush();
      const before = listCalls(dbOf(t.gw), { limit: 100 }).length;
      const miss = await python(t, py, 'miss');
      expect(miss).toMatchObject({ class: 'NotFoundError', status: 404, code: 'cassette_miss', should_retry: 'false' });
      expect(miss.message).toContain('POST /v1/chat/completions');
      t.flush();
      expect(listCalls(dbOf(t.gw), { limit: 100 }).length - before).toBe(1);
      expect(watch.chat.requests).toHaveLength(0);
      expect(watch.extra.requests).toHaveLength(0);
    } finally {
      await t.close();
      await watch.close();
    }

    const all = cassetteTexts(cassette.dir)
      .map((f) => f.text)
      .join('\n');
    for (const secret of [recorderKey, CHAT_SECRET, EXTRA_SECRET]) expect(all).not.toContain(secret);
  });
});
