/**
 * The server's in-memory view of the configuration in the shared state. Every change (CLI, admin API,
 * another instance) moves the config version; the state tells the server (SQLite: a poll of that one
 * integer every 250 ms; a team: Redis pub/sub with a poll fallback) and it reloads, so a new or
 * disabled key is live within a second without a restart. Requests read only this memory.
 */
import type { ConfigSnapshot, GatewayState } from '../state/gateway-state.ts';
import { storageErrorFor } from '../storage/db.ts';
import { andThen, type Awaitable } from '../state/awaitable.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import type { UserPrice } from '../storage/prices-repo.ts';
import { adapterFor } from '../providers/registry.ts';
import type { ProviderAdapter, ProviderSettings } from '../providers/types.ts';
import type { Strategy } from '../routing/strategy.ts';

/** How often a config reload that keeps failing is reported. */
const RELOAD_FAILURE_REPORT_MS = 30_000;

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
  /** The prices users set (`gateway prices set`), as of the last reload. */
  userPrices: UserPrice[] = [];
  private unwatch: (() => void) | null = null;
  /** Reloads may overlap when the state answers asynchronously: only the newest one applies. */
  private reloadsStarted = 0;
  private reloadsApplied = 0;
  private lastRecheckAt = 0;
  private readonly listeners: Array<() => void> = [];

  /** Run-time facts that must survive reloads (e.g. a provider refusing `stream_options`). */
  readonly learnedOptions = new Map<string, Record<string, unknown>>();

  private readonly state: GatewayState;
  private readonly demoBaseUrl: () => string | null;

  constructor(state: GatewayState, demoBaseUrl: () => string | null) {
    this.state = state;
    this.demoBaseUrl = demoBaseUrl;
  }

  reloadIfChanged(): Awaitable<boolean> {
    return andThen(this.state.configVersion(), (v) => (v === this.version ? false : andThen(this.reload(), () => true)));
  }

  /** Reads the whole configuration again (synchronously on SQLite, so the next request sees it). */
  reload(): Awaitable<void> {
    const seq = ++this.reloadsStarted;
    return andThen(this.state.snapshot(), (snap) => {
      if (seq < this.reloadsApplied) return;
      this.reloadsApplied = seq;
      this.apply(snap);
    });
  }

  /**
   * A key announced as changed (disabled, deleted, rotated, its limits...) → the reload that reads the change.
   * Calls with that key wait for it rather than use the key as memory has it; while it fails (an instance cut from
   * PostgreSQL but not from Redis) they fail with it, so a key just revoked is refused, not served for the whole
   * outage. Any reload that succeeds ends the wait for every key.
   */
  readonly changingKeys = new Map<string, Promise<void>>();

  private keyChanged(hash: string): void {
    if (!this.keysByHash.has(hash)) return;
    const reading = this.reload();
    // Read already (a store that answers at once): nothing to wait for.
    if (!(reading instanceof Promise)) return;
    reading.catch(() => undefined);
    this.changingKeys.set(hash, reading);
  }

  private apply(snap: ConfigSnapshot): void {
    this.changingKeys.clear();
    this.version = snap.version;
    const keys = new Map<string, StoredKey>();
    for (const k of snap.keys) keys.set(k.hash, k);
    this.keysByHash = keys;
    this.userPrices = snap.prices;

    const served = snap.served;
    const providers: RuntimeProvider[] = [];
    for (const p of snap.providers) {
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

    this.aliases = new Map(snap.aliases.map((a) => [a.name, { name: a.name, targets: a.targets, strategy: a.strategy }]));
    for (const fn of this.listeners) fn();
  }

  /**
   * A key unknown to the in-memory table may have been created a moment ago (before the next poll):
   * look it up in the state before refusing it. At most one look-up per `minIntervalMs`, so a flood of
   * wrong keys costs one indexed read per interval, not one per request.
   */
  recheckUnknownKey(hash: string, now = Date.now(), minIntervalMs = 25): Awaitable<StoredKey | undefined> {
    if (now - this.lastRecheckAt < minIntervalMs) return undefined;
    this.lastRecheckAt = now;
    return andThen(this.state.keys.findByHash(hash), (found) => (found === null ? undefined : andThen(this.reload(), () => this.keysByHash.get(hash))));
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
    // The poll runs a few times a second: a store that is away (a team's PostgreSQL restarting) is reported at once,
    // then every 30 s with how many reloads failed in between, not on every tick.
    let reportedAt = Number.NEGATIVE_INFINITY;
    let unreported = 0;
    const failed = (err: unknown) => {
      const now = Date.now();
      if (now - reportedAt < RELOAD_FAILURE_REPORT_MS) {
        unreported++;
        return;
      }
      const more = unreported > 0 ? ` (${unreported} more failed since the last report)` : '';
      console.error(`[gateway] config reload failed${more}: ${(storageErrorFor(err, this.state.location) as Error).message}`);
      reportedAt = now;
      unreported = 0;
    };
    this.unwatch = this.state.watchConfig((changedKeyHash) => {
      if (changedKeyHash !== undefined) this.keyChanged(changedKeyHash);
      try {
        const r = this.reloadIfChanged();
        if (r instanceof Promise) r.catch(failed);
      } catch (err) {
        failed(err);
      }
    }, intervalMs);
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = null;
  }
}
