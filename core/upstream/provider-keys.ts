/**
 * Resolves a provider's secret when a request is sent: an env var is read each time (rotating it
 * needs no restart); a keychain entry is read once and cached until the configuration changes.
 */
import type { ProviderSettings } from '../providers/types.ts';
import type { SecretStore } from '../secrets/secret-store.ts';

export class ProviderKeys {
  private readonly cache = new Map<string, Promise<string | null>>();
  private readonly store: () => Promise<SecretStore | null>;

  constructor(store: () => Promise<SecretStore | null>) {
    this.store = store;
  }

  async keyFor(p: ProviderSettings): Promise<string | null> {
    if (p.keySource === 'env') return (p.keyEnv && process.env[p.keyEnv]) || null;
    if (p.keySource !== 'keychain') return null;
    let pending = this.cache.get(p.name);
    if (!pending) {
      pending = this.store().then((s) => (s ? s.get(p.name) : null));
      this.cache.set(p.name, pending);
      pending.catch(() => this.cache.delete(p.name));
    }
    return pending;
  }

  /** Every secret currently known, for scrubbing upstream messages. */
  async knownSecrets(p: ProviderSettings): Promise<string[]> {
    const k = await this.keyFor(p).catch(() => null);
    return k ? [k] : [];
  }

  clear(): void {
    this.cache.clear();
  }
}
