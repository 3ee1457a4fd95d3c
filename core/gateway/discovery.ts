/**
 * Model discovery: providers added without `--models` serve what their own listing says. The list is
 * cached in the shared state and refreshed on start and by `gateway providers refresh`.
 */
import { adapterFor } from '../providers/registry.ts';
import type { ProviderSettings } from '../providers/types.ts';
import type { GatewayState } from '../state/gateway-state.ts';
import type { Transport } from '../upstream/transport.ts';
import { classifyTransportError } from '../upstream/transport.ts';
import type { ProviderKeys } from '../upstream/provider-keys.ts';
import { scrubSecrets } from './scrub.ts';

export type RefreshResult = { provider: string; ok: true; models: string[] } | { provider: string; ok: false; error: string };

export async function listProviderModels(
  p: ProviderSettings,
  apiKey: string | null,
  transport: Transport,
  timeoutMs = 15_000,
): Promise<{ ok: true; models: string[] } | { ok: false; error: string }> {
  const adapter = adapterFor(p.type);
  const req = adapter.modelsRequest({ provider: p, apiKey });
  if (!req) return { ok: false, error: 'this provider cannot list its models; add them with --models' };
  try {
    const res = await transport.send(req, { connectMs: timeoutMs, headersMs: timeoutMs, idleMs: timeoutMs });
    const text = await res.body.text();
    if (res.status >= 400) {
      const f = adapter.parseError(res.status, text, res.headers);
      return { ok: false, error: scrubSecrets(`HTTP ${res.status}: ${f.message}`, [apiKey]) };
    }
    return { ok: true, models: adapter.parseModels(JSON.parse(text)) };
  } catch (err) {
    const te = classifyTransportError(err);
    return { ok: false, error: scrubSecrets(te.message, [apiKey]) };
  }
}

export async function refreshProviderModels(
  store: GatewayState,
  keys: ProviderKeys,
  transport: Transport,
  only?: string,
  baseUrlOverride?: (p: ProviderSettings) => string,
): Promise<RefreshResult[]> {
  const providers = (await store.providers.list()).filter((p) => (only ? p.name === only : p.models === null));
  return Promise.all(
    providers.map(async (p): Promise<RefreshResult> => {
      if (p.models !== null) return { provider: p.name, ok: true, models: p.models };
      const settings = baseUrlOverride ? { ...p, baseUrl: baseUrlOverride(p) } : p;
      const apiKey = await keys.keyOrNull(settings);
      const listed = await listProviderModels(settings, apiKey, transport);
      if (!listed.ok) return { provider: p.name, ok: false, error: listed.error };
      await store.providers.setDiscoveredModels(p.name, listed.models);
      return { provider: p.name, ok: true, models: listed.models };
    }),
  );
}
