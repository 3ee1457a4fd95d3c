/**
 * A record-then-replay rig: fake OpenAI upstreams (chat, embeddings, legacy completions, images,
 * audio), a gateway recording through them into a cassette directory, and, once the upstreams are
 * stopped, a second gateway replaying the same directory while a watch upstream counts any call that
 * leaks through.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EXTRA_MODELS, startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { ExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import type { CassetteMode } from '../../core/cassettes/mode.ts';
import type { NewKey } from '../../core/storage/keys-repo.ts';

export const CHAT_SECRET = 'sk-cassette-chat-upstream-0123456789abcdef';
export const EXTRA_SECRET = 'sk-cassette-extra-upstream-0123456789abcdef';
const CHAT_MODELS = ['gpt-4o-mini', 'text-embedding-3-small'];

export interface Upstreams {
  chat: FakeUpstream;
  extra: ExtraUpstream;
  close(): Promise<void>;
}

export async function startUpstreams(): Promise<Upstreams> {
  const chat = await startOpenAIUpstream({ models: CHAT_MODELS });
  const extra = await startOpenAIExtraUpstream();
  return {
    chat,
    extra,
    async close() {
      await chat.close();
      await extra.close();
    },
  };
}

/** A gateway whose providers point at `up` (live or stopped), with a cassette for the whole gateway. */
export function cassetteGateway(up: Pick<Upstreams, 'chat' | 'extra'>, cassette: { mode: CassetteMode; dir: string } | null, keys?: NewKey[]): Promise<TestGateway> {
  return startTestGateway({
    keys,
    settings: cassette ? { cassettes: cassette } : {},
    providers: [
      { name: 'oa', type: 'openai', baseUrl: up.chat.url, secret: CHAT_SECRET, models: CHAT_MODELS, priority: 10 },
      { name: 'extra', type: 'openai', baseUrl: up.extra.url, secret: EXTRA_SECRET, models: [...EXTRA_MODELS], priority: 20 },
    ],
  });
}

export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every file of a cassette directory, with its text. */
export function cassetteTexts(dir: string): Array<{ name: string; text: string }> {
  return readdirSync(dir).map((name) => ({ name, text: readFileSync(path.join(dir, name), 'utf8') }));
}
