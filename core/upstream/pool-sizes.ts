/** Connection-pool size per upstream origin, from `upstream.connections` and each provider's override. */
import type { ProviderSettings } from '../providers/types.ts';
import type { Settings } from '../settings.ts';

export function poolSizes(providers: readonly Pick<ProviderSettings, 'name' | 'baseUrl'>[], settings: Pick<Settings, 'upstream'>): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const p of providers) {
    const size = settings.upstream.connectionsByProvider[p.name];
    if (size === undefined) continue;
    let origin: string;
    try {
      origin = new URL(p.baseUrl).origin;
    } catch {
      continue;
    }
    // Two providers on one origin share its pool: the larger setting wins.
    sizes.set(origin, Math.max(size, sizes.get(origin) ?? 0));
  }
  return sizes;
}
