/**
 * The server's in-memory view of the configuration in SQLite. The CLI writes SQLite and bumps
 * `config_version`; the server polls that one integer (every 250 ms) and reloads on change, so a new
 * or disabled key is live within a second without a restart or IPC.
 */
import { storageErrorFor } from '../storage/db.ts';
import type { Store } from '../storage/index.ts';
import { readConfigVersion } from '../storage/config-version.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import { adapterFor } from '../providers/registry.ts';
import type { ProviderAdapter, ProviderSettings } from '../providers/types.ts';
import type { Strategy } from '../routing/strategy.ts';

export interface RuntimeProvider {
  settings: ProviderSettings;
  adapter: ProviderAdapter;
  models: ReadonlySet<string>;
}

export interface AliasTarget {
  provider: string;
  model: string;
}

export interface LiveAlias {
  name: string;
  targets: AliasTarget[];
  strategy: Strategy;
}

export class LiveConfig {
  version = -1;
  keysByHash = new Map<string, StoredKey>();
  providers: RuntimeProvider[] = [];
  providersByName = new Map<string, RuntimeProvider>();
  aliases = new Map<string, LiveAlias>();
  /** Every model id some provider serves → those providers in routing order (priority, then insertion). */
  modelIndex = new Map<string, RuntimeProvider[]>();
  allModels = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private lastRecheckAt = 0;
  private readonly listeners: Array<() => void> = [];

  /** Run-time facts that must survive reloads (e.g. a provider refusing `stream_options`). */
  readonly learnedOptions = new Map<string, Record<string, unknown>>();

  private readonly store: Store;
  private readonly demoBaseUrl: () => string | null;

  constructor(store: Store, demoBaseUrl: () => string | null) {
    this.store = store;
    this.demoBaseUrl = demoBaseUrl;
  }

  reloadIfChanged(): boolean {
    const v = readConfigVersion(this.store.db);
    if (v === this.version) return false;
    this.reload(v);
    return true;
  }

  reload(version = readConfigVersion(this.store.db)): void {
    this.version = version;
    const keys = new Map<string, StoredKey>();
    for (const k of this.store.keys.list({ includeDeleted: true })) keys.set(k.hash, k);
    this.keysByHash = keys;

    const served = this.store.providers.allServedModels();
    const providers: RuntimeProvider[] = [];
    for (const p of this.store.providers.list()) {
      const learned = this.learnedOptions.get(p.name) ?? {};
      const demo = p.type === 'demo' ? this.demoBaseUrl() : null;
      const settings: ProviderSettings = { ...p, baseUrl: demo ?? p.baseUrl, options: { ...p.options, ...learned } };
      providers.push({ settings, adapter: adapterFor(p.type), models: new Set(served.get(p.name) ?? []) });
    }
    this.providers = providers;
    this.providersByName = new Map(providers.map((p) => [p.settings.name, p]));
    const index = new Map<string, RuntimeProvider[]>();
    for (const p of providers) {
      for (const m of p.models) {
        const list = index.get(m);
        if (list) list.push(p);
        else index.set(m, [p]);
      }
    }
    this.modelIndex = index;
    this.allModels = new Set(index.keys());

    this.aliases = new Map(this.store.aliases.list().map((a) => [a.name, { name: a.name, targets: a.targets, strategy: a.strategy }]));
    for (const fn of this.listeners) fn();
  }

  /**
   * A key unknown to the in-memory table may have been created a moment ago (before the next poll):
   * look it up in SQLite before refusing it. At most one look-up per `minIntervalMs`, so a flood of
   * wrong keys costs one indexed read per interval, not one per request.
   */
  recheckUnknownKey(hash: string, now = Date.now(), minIntervalMs = 25): StoredKey | undefined {
    if (now - this.lastRecheckAt < minIntervalMs) return undefined;
    this.lastRecheckAt = now;
    if (this.store.keys.findByHash(hash) === null) return undefined;
    this.reload();
    return this.keysByHash.get(hash);
  }

  onReload(fn: () => void): void {
    this.listeners.push(fn);
  }

  learn(provider: string, options: Record<string, unknown>): void {
    this.learnedOptions.set(provider, { ...(this.learnedOptions.get(provider) ?? {}), ...options });
    const rp = this.providersByName.get(provider);
    if (rp) rp.settings = { ...rp.settings, options: { ...rp.settings.options, ...options } };
  }

  startPolling(intervalMs = 250): void {
    this.timer = setInterval(() => {
      try {
        this.reloadIfChanged();
      } catch (err) {
        console.error('[gateway] config reload failed:', (storageErrorFor(err, this.store.db.name) as Error).message);
      }
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
