/**
 * Resolves a provider's secret when a request is sent: an env var is read each time (rotating it
 * needs no restart); a keychain entry is read once and cached until the configuration changes.
 */
import { LOCAL_KEY_PREFIX } from '../keys/local-key.ts';
import type { ProviderSettings } from '../providers/types.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import type { Awaitable } from '../state/awaitable.ts';

/**
 * A provider's variable holding one of our own `sk-gw-` keys (after `eval "$(gateway env --new-key ...)"`
 * in a shell that also feeds the provider): never send it upstream, say why instead.
 */
export const holdsGatewayKey = (value: string | undefined): boolean => value !== undefined && value.trim().startsWith(LOCAL_KEY_PREFIX);

export function gatewayKeyInVarMessage(provider: string, variable: string): string {
  return (
    `$${variable} holds a gateway key (${LOCAL_KEY_PREFIX}...), not ${provider}'s own API key (\`gateway env --new-key\` exports OPENAI_API_KEY). ` +
    `Keep the provider's key under another name (--key-env ${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PROVIDER_KEY) or in the keychain (--key-stdin, or \`gateway init\`).`
  );
}

export class ProviderKeys {
  private readonly cache = new Map<string, Promise<string | null>>();
  private readonly store: () => Promise<SecretStore | null>;

  constructor(store: () => Promise<SecretStore | null>) {
    this.store = store;
  }

  /**
   * The provider's secret: at once for an env var (read on every call), a promise for a keychain entry
   * (cached; a failed read is forgotten, so the next call asks the keychain again).
   */
  keyFor(p: ProviderSettings): Awaitable<string | null> {
    if (p.keySource === 'env') {
      const v = p.keyEnv ? process.env[p.keyEnv] : undefined;
      return v && !holdsGatewayKey(v) ? v : null;
    }
    if (p.keySource !== 'keychain') return null;
    let pending = this.cache.get(p.name);
    if (!pending) {
      pending = this.store().then((s) => (s ? s.get(p.name) : null));
      this.cache.set(p.name, pending);
      pending.catch(() => this.cache.delete(p.name));
    }
    return pending;
  }

  /** Why `keyFor` found no usable key, for the error that names the provider; `where` is whose environment. */
  missingKeyReason(p: ProviderSettings, where = ''): string {
    if (p.keySource !== 'env') return 'no key in the keychain';
    const variable = p.keyEnv ?? '?';
    if (holdsGatewayKey(process.env[variable])) return gatewayKeyInVarMessage(p.name, variable);
    return `$${variable} is not set${where ? ` ${where}` : ''}`;
  }

  /** `keyFor` off the hot path: always a promise, and a keychain that fails to answer reads as no key. */
  async keyOrNull(p: ProviderSettings): Promise<string | null> {
    try {
      return await this.keyFor(p);
    } catch {
      return null;
    }
  }

  /** Every secret currently known, for scrubbing upstream messages. */
  async knownSecrets(p: ProviderSettings): Promise<string[]> {
    const k = await this.keyOrNull(p);
    return k ? [k] : [];
  }

  clear(): void {
    this.cache.clear();
  }
}
