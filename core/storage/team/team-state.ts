/**
 * Team mode's `GatewayState`: keys, providers, aliases, prices and the audit log in PostgreSQL (its own
 * migrations, applied on open); budget counters, rate-limit windows and change notification in Redis.
 * A configuration change commits in PostgreSQL, then is published on `gw:config`; every instance
 * subscribed reloads at once, and polls the version in PostgreSQL as a fallback (a lost message, a
 * Redis restart), so a change made through one instance is live on all within a second.
 */
import { Redis } from 'ioredis';
import type { AuditWriterOptions } from '../audit-writer.ts';
import { StorageError } from '../db.ts';
import type { Clock } from '../../routing/clock.ts';
import type { ConfigSnapshot, GatewayState, OpenedState } from '../../state/gateway-state.ts';
import { redact, type TeamUrls } from '../../state/team-urls.ts';
import type { AliasRow } from '../aliases-repo.ts';
import { toAlias } from '../aliases-repo.ts';
import { toStoredKey, type KeyRow } from '../keys-repo.ts';
import { toPrice, type PriceRow } from '../prices-repo.ts';
import { toSettings, type ProviderRow } from '../providers-repo.ts';
import { PgAdminTokens } from './pg-admin-tokens.ts';
import { PgAuditWriter } from './pg-audit-writer.ts';
import { PgCallQueries } from './pg-calls.ts';
import { PgAliases, PgConfigWriter, PgKeys, PgPrices, PgProviders, servedModels } from './pg-config.ts';
import { applyPgMigrations } from './pg-migrations.ts';
import { inTransaction, openPool, type Pool } from './pg-pool.ts';
import { RedisBudgets } from './redis-budgets.ts';
import { RedisLoginCodes } from './redis-login-codes.ts';
import { RedisRateWindows } from './redis-rate-windows.ts';
import { unreachableServer } from './unreachable.ts';

export const CONFIG_CHANNEL = 'gw:config';
/** A change to one key is announced as `key:` and the hash it had before the change. */
const KEY_NOTICE = 'key:';
/** The slowest a change may take to arrive when pub/sub missed it. */
const MAX_POLL_MS = 500;

export class TeamState implements GatewayState {
  readonly kind = 'team' as const;
  readonly location: string;
  readonly keys: PgKeys;
  readonly providers: PgProviders;
  readonly aliases: PgAliases;
  readonly prices: PgPrices;
  readonly adminTokens: PgAdminTokens;
  readonly calls: PgCallQueries;
  readonly audit: PgAuditWriter;
  readonly redis: Redis;
  readonly #pool: Pool;
  readonly #writer: PgConfigWriter;
  readonly #urls: TeamUrls;
  #subscriber: Redis | null = null;
  readonly #watchers = new Set<(changedKeyHash?: string) => void>();
  #closing: Promise<void> | null = null;

  constructor(pool: Pool, redis: Redis, urls: TeamUrls, audit?: AuditWriterOptions) {
    this.#pool = pool;
    this.redis = redis;
    this.#urls = urls;
    this.location = `${redact(urls.database)} + ${redact(urls.redis)}`;
    this.#writer = new PgConfigWriter(pool, (keyHash) => {
      this.redis.publish(CONFIG_CHANNEL, keyHash !== undefined ? `${KEY_NOTICE}${keyHash}` : String(Date.now())).catch(() => undefined);
    });
    this.keys = new PgKeys(this.#writer);
    this.providers = new PgProviders(this.#writer);
    this.aliases = new PgAliases(this.#writer);
    this.prices = new PgPrices(this.#writer);
    this.adminTokens = new PgAdminTokens(pool);
    this.calls = new PgCallQueries(pool);
    this.audit = new PgAuditWriter(pool, audit);
  }

  configVersion(): Promise<number> {
    return this.#writer.version();
  }

  /** One REPEATABLE READ transaction, so keys, providers and aliases all come from the same version. */
  snapshot(): Promise<ConfigSnapshot> {
    return inTransaction(this.#pool, async (c) => {
      await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const version = (await c.query<{ v: number }>(`SELECT v FROM meta WHERE k = 'config_version'`)).rows[0]?.v ?? 0;
      const keys = (await c.query<KeyRow>(`SELECT * FROM keys ORDER BY created_at, seq`)).rows.map(toStoredKey);
      const providers = (await c.query<ProviderRow>(`SELECT * FROM providers ORDER BY priority, seq`)).rows.map(toSettings);
      const served = await servedModels(c, providers);
      const aliases = (await c.query<AliasRow>(`SELECT * FROM aliases ORDER BY name`)).rows.map(toAlias);
      const prices = (await c.query<PriceRow>(`SELECT * FROM prices ORDER BY model`)).rows.map(toPrice);
      return { version, keys, providers, served, aliases, prices };
    });
  }

  watchConfig(fn: (changedKeyHash?: string) => void, pollMs: number): () => void {
    this.#watchers.add(fn);
    if (this.#subscriber === null) {
      const sub = new Redis(this.#urls.redis, { lazyConnect: false, maxRetriesPerRequest: null });
      sub.on('error', () => undefined); // reconnects by itself; the poll covers the gap
      sub.on('message', (_channel: string, message: string) => {
        const keyHash = message.startsWith(KEY_NOTICE) ? message.slice(KEY_NOTICE.length) : undefined;
        for (const w of this.#watchers) w(keyHash);
      });
      sub.subscribe(CONFIG_CHANNEL).catch(() => undefined);
      this.#subscriber = sub;
    }
    const timer = setInterval(fn, Math.min(pollMs, MAX_POLL_MS));
    timer.unref();
    return () => {
      clearInterval(timer);
      this.#watchers.delete(fn);
    };
  }

  unreachable(err: unknown): string | null {
    return unreachableServer(err, this.#urls);
  }

  drainAudit(): Promise<void> {
    return this.audit.drain();
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.audit.close();
      await this.audit.drain().catch(() => undefined);
      this.#subscriber?.disconnect();
      await this.redis.quit().catch(() => undefined);
      await this.#pool.end().catch(() => undefined);
    })();
    return this.#closing;
  }
}

export interface TeamOpenOptions {
  server: boolean;
  clock?: Clock;
  audit?: AuditWriterOptions;
}

/** Connects to both servers (failing at once, with the address, when either is unreachable) and migrates PostgreSQL. */
export async function openTeamState(urls: TeamUrls, opts: TeamOpenOptions): Promise<OpenedState> {
  const pool = openPool(urls.database, opts.server ? 20 : 2);
  try {
    await applyPgMigrations(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new StorageError('database_unreadable', `PostgreSQL at ${redact(urls.database)} cannot be used: ${(err as Error).message}`);
  }
  const redis = new Redis(urls.redis, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  // Each command reports its own failure; the last one seen while connecting says why it failed (a wrong password's
  // WRONGPASS, where connect() itself only says "Connection is closed").
  let refusal: Error | null = null;
  redis.on('error', (e: Error) => {
    refusal = e;
  });
  try {
    await redis.connect();
    // The client selects the URL's database itself, and on a refusal ("DB index is out of range") stays on 0.
    const db = Number(new URL(urls.redis).pathname.slice(1) || 0);
    if (db > 0) await redis.select(db);
  } catch (err) {
    redis.disconnect();
    await pool.end().catch(() => undefined);
    const why = (refusal as Error | null)?.message ?? (err as Error).message;
    throw new StorageError('database_unreadable', `Redis at ${redact(urls.redis)} cannot be used: ${why}`);
  }
  if (opts.server) await checkTimeZone(redis);
  const state = new TeamState(pool, redis, urls, opts.audit);
  return {
    state,
    budgets: new RedisBudgets(redis, state.calls),
    limiter: new RedisRateWindows(redis, { clock: opts.clock }),
    logins: new RedisLoginCodes(redis),
  };
}

const TEAM_TIME_ZONE = 'gw:time-zone';

/**
 * Daily and monthly budgets start at midnight in the process's time zone: instances in two zones would each grant
 * a day's budget. The first instance names the team's zone; one started in another says so loudly.
 */
async function checkTimeZone(redis: Redis): Promise<void> {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const set = await redis.set(TEAM_TIME_ZONE, zone, 'NX').catch(() => null);
  if (set === 'OK') return;
  const team = await redis.get(TEAM_TIME_ZONE).catch(() => null);
  if (team !== null && team !== zone) {
    console.error(
      `[gateway] warning: this instance runs in time zone ${zone}, the team's first instance in ${team}: daily and monthly budgets would start at two midnights. Start every instance with TZ=${team} (or DEL ${TEAM_TIME_ZONE} in Redis to name another zone).`,
    );
  }
}
