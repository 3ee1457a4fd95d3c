/**
 * `gateway providers test`: a real check of each provider in plain words: is it reachable, is the key
 * accepted, does one tiny call work. The running gateway answers it on the admin API with its own
 * environment and keys (what its calls will use); without one, the CLI runs it itself.
 */
import { adapterFor } from '../providers/registry.ts';
import type { ProviderSettings } from '../providers/types.ts';
import { listProviderModels } from '../gateway/discovery.ts';
import { scrubSecrets } from '../gateway/scrub.ts';
import type { ProviderKeys } from '../upstream/provider-keys.ts';
import { classifyTransportError, type Transport } from '../upstream/transport.ts';

export interface ProviderVerdict {
  provider: string;
  ok: boolean;
  verdict: string;
  model: string | null;
  latency_ms: number | null;
}

const TIMEOUT = { connectMs: 10_000, headersMs: 30_000, idleMs: 30_000 };

async function testOne(p: ProviderSettings, keys: ProviderKeys, transport: Transport, served: string[], where: string): Promise<ProviderVerdict> {
  const base = { provider: p.name, model: null, latency_ms: null };
  let apiKey: string | null = null;
  if (p.keySource !== 'none') {
    apiKey = await keys.keyOrNull(p);
    if (!apiKey) {
      const why = p.keySource === 'env' ? keys.missingKeyReason(p, where) : 'its key is missing from the keychain';
      return { ...base, ok: false, verdict: `no key: ${why.replace(/\.$/, '')}.` };
    }
  }
  const listed = await listProviderModels(p, apiKey, transport, 15_000);
  const models = p.models ?? (listed.ok ? listed.models : served);
  const chatModel = models.find((m) => !/embed|whisper|tts|dall-e|image|moderation|audio|rerank/i.test(m));
  if (!chatModel) {
    if (!listed.ok) {
      // An HTTP status means the provider answered: it is reachable, and the status says what is wrong.
      const status = /^HTTP (\d{3})\b/.exec(listed.error)?.[1];
      if (status === '401' || status === '403') return { ...base, ok: false, verdict: `reachable, but the key was refused (${listed.error}).` };
      if (status) return { ...base, ok: false, verdict: `reachable, but listing its models failed (${listed.error}); add them with --models to try a call.` };
      return { ...base, ok: false, verdict: `not reachable: ${listed.error}.` };
    }
    return { ...base, ok: listed.ok, verdict: `reachable and the key works, but it lists no chat model to try.` };
  }
  const adapter = adapterFor(p.type);
  const ctx = { provider: p, model: chatModel, apiKey, stream: false };
  const started = performance.now();
  try {
    const req = adapter.chatRequest({ model: chatModel, messages: [{ role: 'user', content: 'Reply with the word ok.' }], max_tokens: 5 }, ctx);
    const res = await transport.send(req, TIMEOUT);
    const text = await res.body.text();
    const latency = Math.round(performance.now() - started);
    if (res.status >= 400) {
      const f = adapter.parseError(res.status, text, res.headers);
      const what = res.status === 401 || res.status === 403 ? 'reachable, but the key was refused' : `reachable, but a tiny call to ${chatModel} failed`;
      return { ...base, model: chatModel, latency_ms: latency, ok: false, verdict: `${what} (HTTP ${res.status}: ${scrubSecrets(f.message, [apiKey])}).` };
    }
    try {
      adapter.chatResponse(JSON.parse(text), ctx);
    } catch (err) {
      // It answered, so it is reachable: an unreadable answer is not a connection problem.
      const why = scrubSecrets((err as Error)?.message ?? String(err), [apiKey]);
      return { ...base, model: chatModel, latency_ms: latency, ok: false, verdict: `reachable, but the answer to a tiny call to ${chatModel} could not be read (${why}).` };
    }
    const keyPart = apiKey ? 'key accepted, ' : '';
    return { ...base, model: chatModel, latency_ms: latency, ok: true, verdict: `reachable, ${keyPart}a tiny call to ${chatModel} answered in ${latency} ms.` };
  } catch (err) {
    const te = classifyTransportError(err);
    // Only a failed connection means "not reachable"; a timeout or a dropped answer say what happened.
    const what = te.kind === 'timeout' ? 'no answer in time' : te.kind === 'reset' ? 'the connection dropped' : 'not reachable';
    return { ...base, model: chatModel, ok: false, verdict: `${what}: ${scrubSecrets(te.message, [apiKey])}.` };
  }
}

/**
 * Checks each provider side by side. `where` names whose environment `--key-env` variables come from
 * ("in this shell", "in the gateway's environment"); demo providers must already point at a live demo upstream.
 */
export async function checkProviders(
  list: readonly ProviderSettings[],
  keys: ProviderKeys,
  transport: Transport,
  served: (provider: string) => string[],
  where: string,
): Promise<ProviderVerdict[]> {
  return Promise.all(list.map((p) => testOne(p, keys, transport, served(p.name), where)));
}
