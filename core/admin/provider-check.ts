/**
 * "Test" a provider from the dashboard: one tiny chat call made by the running gateway itself, with
 * its own transport and its own view of the provider's key (so an env var set only where the gateway
 * runs counts, unlike `gateway providers test` in another shell). The verdict is in plain words.
 */
import type { RuntimeProvider } from '../gateway/live-config.ts';
import { scrubSecrets } from '../gateway/scrub.ts';
import type { ProviderKeys } from '../upstream/provider-keys.ts';
import { classifyTransportError } from '../upstream/transport.ts';
import type { Transport } from '../upstream/transport.ts';

export interface ProviderCheck {
  provider: string;
  ok: boolean;
  verdict: string;
  model: string | null;
  latency_ms: number | null;
}

const TIMEOUT = { connectMs: 10_000, headersMs: 30_000, idleMs: 30_000 };
const NOT_CHAT = /embed|whisper|tts|dall-e|image|moderation|audio|rerank/i;

export async function checkProvider(p: RuntimeProvider, keys: ProviderKeys, transport: Transport): Promise<ProviderCheck> {
  const s = p.settings;
  const base = { provider: s.name, model: null, latency_ms: null };
  let apiKey: string | null = null;
  if (s.keySource !== 'none') {
    apiKey = await keys.keyFor(s).catch(() => null);
    if (!apiKey) {
      const where = s.keySource === 'env' ? `$${s.keyEnv} is not set where the gateway runs` : 'its key is missing from the keychain';
      return { ...base, ok: false, verdict: `no key: ${where}.` };
    }
  }
  const model = [...p.models].find((m) => !NOT_CHAT.test(m));
  if (!model) return { ...base, ok: false, verdict: 'it lists no chat model to try: refresh its models, or add it with a fixed model list.' };
  const ctx = { provider: s, model, apiKey, stream: false };
  const started = performance.now();
  try {
    const req = p.adapter.chatRequest({ model, messages: [{ role: 'user', content: 'Reply with the word ok.' }], max_tokens: 5 }, ctx);
    const res = await transport.send(req, TIMEOUT);
    const text = await res.body.text();
    const latency = Math.round(performance.now() - started);
    if (res.status >= 400) {
      const f = p.adapter.parseError(res.status, text, res.headers);
      const what = res.status === 401 || res.status === 403 ? 'reachable, but the key was refused' : `reachable, but a tiny call to ${model} failed`;
      return { ...base, model, latency_ms: latency, ok: false, verdict: `${what} (HTTP ${res.status}: ${scrubSecrets(f.message, [apiKey])}).` };
    }
    try {
      p.adapter.chatResponse(JSON.parse(text), ctx);
    } catch (err) {
      return { ...base, model, latency_ms: latency, ok: false, verdict: `reachable, but the answer could not be read (${scrubSecrets((err as Error).message, [apiKey])}).` };
    }
    return { ...base, model, latency_ms: latency, ok: true, verdict: `${apiKey ? 'key accepted, ' : ''}a tiny call to ${model} answered in ${latency} ms.` };
  } catch (err) {
    const te = classifyTransportError(err);
    const what = te.kind === 'timeout' ? 'no answer in time' : te.kind === 'reset' ? 'the connection dropped' : 'not reachable';
    return { ...base, model, ok: false, verdict: `${what}: ${scrubSecrets(te.message, [apiKey])}.` };
  }
}
