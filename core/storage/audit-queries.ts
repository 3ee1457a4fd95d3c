/**
 * The audit trail's read side: call lists for `gateway logs`, usage summaries for `gateway usage`,
 * spend sums for budgets, and retention.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from './db.ts';
import type { CallRow, Pricing } from './audit-writer.ts';
import { USAGE_ROWS_CTE, usageRangeParams } from './usage-rollup.ts';
import type { UsageRangeParams } from './usage-rollup.ts';

/** One try at one provider within a call, as read back from `attempts_json`. */
export interface CallAttempt {
  provider: string;
  model: string;
  /** Upstream HTTP status, or null when no response came (connection error, timeout). */
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** A stored call with its attempts parsed. */
export type StoredCall = CallRow & { attemptList: CallAttempt[] };
/** A call without its bodies, as lists show it. */
export type CallSummary = Omit<StoredCall, 'requestBody' | 'responseBody'>;

export interface ListCallsOptions {
  limit: number;
  /** Only calls strictly before this unix ms (for paging back). */
  beforeTime?: number;
  /** Only calls made with the key that had this name at the time. */
  keyName?: string;
  /** Only calls at or after this unix ms. */
  sinceTime?: number;
}

export type UsageGrouping = 'key' | 'model' | 'provider' | 'day';

export interface UsageSummaryOptions {
  by: UsageGrouping;
  /** Unix ms; only calls at or after it. */
  since?: number;
  /** Unix ms; only calls before it. */
  until?: number;
}

/** Snake case on purpose: this is also the shape `gateway usage --json` prints. */
export interface UsageSummaryRow {
  /** Key name (`name (deleted)` for deleted keys), model, provider, or local-time day `YYYY-MM-DD`. */
  group: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost_usd: number;
  /** Calls that answered with a status of 400 or more. */
  errors: number;
  /** Calls whose cost is unknown (no price for the model): `cost_usd` leaves them out. */
  unpriced: number;
}

export interface SpendTotals {
  todayUsd: number;
  monthUsd: number;
}

export interface PurgeOptions {
  /** Deletes calls older than this many ms (an age, measured from `now`). */
  olderThanMs?: number;
  /** Deletes calls before this unix ms. */
  beforeTime?: number;
  /** Keeps only the newest N calls. */
  keepMaxRows?: number;
  now?: number;
}

/** One `calls` row as SQLite returns it (`SELECT SUMMARY_COLUMNS` or `*`). */
export interface CallDbRow {
  id: string;
  time: number;
  key_id: string | null;
  key_name: string | null;
  endpoint: string;
  model_requested: string | null;
  model: string | null;
  provider: string | null;
  status: number;
  error_type: string | null;
  error_message: string | null;
  stream: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost_usd: number | null;
  pricing: Pricing;
  price_version: string | null;
  latency_ms: number;
  ttft_ms: number | null;
  attempts: number;
  attempts_json: string;
  user_agent?: string | null;
  session_id?: string | null;
  request_body?: string | null;
  response_body?: string | null;
  replayed: number;
}

export const SUMMARY_COLUMNS = `id, time, key_id, key_name, endpoint, model_requested, model, provider, status, error_type,
  error_message, stream, input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_usd,
  pricing, price_version, latency_ms, ttft_ms, attempts, attempts_json, user_agent, session_id, replayed`;

// Budget checks and the live dashboards run these often: prepare each distinct query once per connection.
const statementCache = new WeakMap<Database, Map<string, BetterSqlite3.Statement<unknown[], unknown>>>();

function prepared<P extends unknown[], R>(db: Database, sql: string): BetterSqlite3.Statement<P, R> {
  let cache = statementCache.get(db);
  if (cache === undefined) statementCache.set(db, (cache = new Map()));
  let statement = cache.get(sql);
  if (statement === undefined) cache.set(sql, (statement = db.prepare(sql)));
  return statement as unknown as BetterSqlite3.Statement<P, R>;
}

/** Newest first; ties in time keep insertion order. */
export function listCalls(db: Database, options: ListCallsOptions): CallSummary[] {
  const where: string[] = [];
  const params: Record<string, string | number> = { limit: Math.max(0, Math.trunc(options.limit)) };
  if (options.beforeTime !== undefined) {
    where.push('time < @beforeTime');
    params.beforeTime = options.beforeTime;
  }
  if (options.sinceTime !== undefined) {
    where.push('time >= @sinceTime');
    params.sinceTime = options.sinceTime;
  }
  if (options.keyName !== undefined) {
    where.push('key_name = @keyName');
    params.keyName = options.keyName;
  }
  const sql = `SELECT ${SUMMARY_COLUMNS} FROM calls ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY time DESC, rowid DESC LIMIT @limit`;
  return prepared<[Record<string, string | number>], CallDbRow>(db, sql).all(params).map(toCallSummary);
}

export function getCall(db: Database, id: string): StoredCall | null {
  const row = prepared<[string], CallDbRow>(db, `SELECT * FROM calls WHERE id = ?`).get(id);
  if (row === undefined) return null;
  return { ...toCallSummary(row), requestBody: row.request_body ?? null, responseBody: row.response_body ?? null };
}

const GROUP_EXPRESSIONS: Record<UsageGrouping, string> = {
  // By key id, not name: a deleted key's name may belong to a new key now.
  key: `u.key_id`,
  model: `u.model`,
  provider: `CASE WHEN u.provider = '' THEN '(none)' ELSE u.provider END`,
  day: `strftime('%Y-%m-%d', u.t / 1000, 'unixepoch', 'localtime')`,
};

/**
 * Ordered by cost (then requests) descending; `day` is ordered by day ascending. Reads the running
 * totals (usage-rollup.ts), so it costs the same at 1M calls as at 0; like the snapshot's sums, it keeps
 * counting calls whose log rows retention has removed (money spent stays spent).
 */
export function usageSummary(db: Database, options: UsageSummaryOptions): UsageSummaryRow[] {
  const groupBy = GROUP_EXPRESSIONS[options.by];
  if (groupBy === undefined) throw new Error(`unknown usage grouping "${String(options.by)}"`);
  const label =
    options.by === 'key'
      ? `CASE WHEN u.key_id = '' THEN '(no key)'
              WHEN k.state = 'deleted' THEN COALESCE(k.name, MAX(NULLIF(u.key_name, ''))) || ' (deleted)'
              ELSE COALESCE(k.name, MAX(NULLIF(u.key_name, '')), u.key_id) END`
      : groupBy;
  const order = options.by === 'day' ? 'ORDER BY 1 ASC' : 'ORDER BY cost_usd DESC, requests DESC, 1 ASC';
  const sql = `WITH ${USAGE_ROWS_CTE}
    SELECT ${label} AS "group",
           SUM(u.requests) AS requests,
           TOTAL(u.input_tokens) AS input_tokens,
           TOTAL(u.output_tokens) AS output_tokens,
           TOTAL(u.cached_tokens) AS cached_tokens,
           TOTAL(u.cache_write_tokens) AS cache_write_tokens,
           TOTAL(u.reasoning_tokens) AS reasoning_tokens,
           TOTAL(u.cost_usd) AS cost_usd,
           SUM(u.errors) AS errors,
           SUM(u.unpriced) AS unpriced
    FROM usage_rows u ${options.by === 'key' ? 'LEFT JOIN keys k ON k.id = u.key_id' : ''}
    GROUP BY ${groupBy}
    ${order}`;
  return prepared<[UsageRangeParams], UsageSummaryRow>(db, sql).all(usageRangeParams(options.since, options.until));
}

/** What a key has spent (USD), optionally since a unix ms: the input to budget checks. */
export function spendForKey(db: Database, keyId: string, sinceMs?: number): number {
  const row = prepared<[string, number], { spent: number }>(
    db,
    `SELECT TOTAL(cost_usd) AS spent FROM calls WHERE key_id = ? AND time >= ?`,
  ).get(keyId, sinceMs ?? Number.MIN_SAFE_INTEGER);
  return row?.spent ?? 0;
}

/** What a key spent (USD) in `[fromMs, toMs)`: the billing-usage endpoints ask for date ranges. */
export function spendForKeyBetween(db: Database, keyId: string, fromMs: number, toMs: number): number {
  const row = prepared<[string, number, number], { spent: number }>(
    db,
    `SELECT TOTAL(cost_usd) AS spent FROM calls WHERE key_id = ? AND time >= ? AND time < ?`,
  ).get(keyId, fromMs, toMs);
  return row?.spent ?? 0;
}

/** Spend of all keys today and this month; the caller picks the local-time starts. */
export function spendTotals(db: Database, range: { todayStartMs: number; monthStartMs: number }): SpendTotals {
  const row = prepared<[{ today: number; month: number }], { today: number; month: number }>(
    db,
    `SELECT TOTAL(CASE WHEN time >= @today THEN cost_usd END) AS today,
            TOTAL(CASE WHEN time >= @month THEN cost_usd END) AS month
     FROM calls WHERE time >= MIN(@today, @month)`,
  ).get({ today: range.todayStartMs, month: range.monthStartMs });
  return { todayUsd: row?.today ?? 0, monthUsd: row?.month ?? 0 };
}

/** Spend (USD) since a local midnight, from the running totals: by key id ('' = no key) or by provider. */
export function spendSinceBy(db: Database, by: 'key' | 'provider', sinceDayStartMs: number): Map<string, number> {
  const column = by === 'key' ? 'key_id' : 'provider';
  const rows = prepared<[number], { k: string; spent: number }>(
    db,
    `SELECT ${column} AS k, TOTAL(cost_usd) AS spent FROM spend_daily WHERE day_start >= ? GROUP BY ${column}`,
  ).all(sinceDayStartMs);
  return new Map(rows.map((r) => [r.k, r.spent]));
}

/** Today's and this month's spend from the running totals; both starts are local midnights. */
export function spendTotalsFromDaily(db: Database, range: { todayStartMs: number; monthStartMs: number }): SpendTotals {
  const row = prepared<[{ today: number; month: number }], { today: number; month: number }>(
    db,
    `SELECT TOTAL(CASE WHEN day_start >= @today THEN cost_usd END) AS today,
            TOTAL(CASE WHEN day_start >= @month THEN cost_usd END) AS month
     FROM spend_daily WHERE day_start >= MIN(@today, @month)`,
  ).get({ today: range.todayStartMs, month: range.monthStartMs });
  return { todayUsd: row?.today ?? 0, monthUsd: row?.month ?? 0 };
}

/** Rows per delete transaction, so a large purge never holds the write lock long enough to stall the server. */
const PURGE_CHUNK = 5000;

/** Retention: deletes by age and/or keeps the newest N calls, then returns the space to the OS. */
export function purgeCalls(db: Database, options: PurgeOptions): number {
  const now = options.now ?? Date.now();
  const cutoffs: number[] = [];
  if (options.olderThanMs !== undefined) cutoffs.push(now - options.olderThanMs);
  if (options.beforeTime !== undefined) cutoffs.push(options.beforeTime);
  let deleted = 0;
  if (cutoffs.length > 0) {
    const cutoff = Math.max(...cutoffs);
    const byAge = db.prepare(`DELETE FROM calls WHERE rowid IN (SELECT rowid FROM calls WHERE time < ? LIMIT ${PURGE_CHUNK})`);
    deleted += deleteInChunks(() => byAge.run(cutoff).changes);
  }
  if (options.keepMaxRows !== undefined) {
    const keep = Math.max(0, Math.trunc(options.keepMaxRows));
    // The newest `keep` rows survive; everything older than the oldest survivor goes, in chunks.
    const bySize = db.prepare(
      `DELETE FROM calls WHERE rowid IN (
         SELECT rowid FROM calls ORDER BY time DESC, rowid DESC LIMIT ${PURGE_CHUNK} OFFSET ?)`,
    );
    deleted += deleteInChunks(() => bySize.run(keep).changes);
  }
  if (deleted > 0) db.pragma('incremental_vacuum');
  return deleted;
}

function deleteInChunks(deleteChunk: () => number): number {
  let total = 0;
  for (;;) {
    const n = deleteChunk();
    total += n;
    if (n < PURGE_CHUNK) return total;
  }
}

export function toCallSummary(row: CallDbRow): CallSummary {
  return {
    id: row.id,
    time: row.time,
    keyId: row.key_id,
    keyName: row.key_name,
    endpoint: row.endpoint,
    modelRequested: row.model_requested,
    model: row.model,
    provider: row.provider,
    status: row.status,
    errorType: row.error_type,
    errorMessage: row.error_message,
    stream: row.stream !== 0,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cachedTokens: row.cached_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    reasoningTokens: row.reasoning_tokens,
    costUsd: row.cost_usd,
    pricing: row.pricing,
    priceVersion: row.price_version,
    latencyMs: row.latency_ms,
    ttftMs: row.ttft_ms,
    attempts: row.attempts,
    attemptsJson: row.attempts_json,
    attemptList: parseAttempts(row.attempts_json),
    userAgent: row.user_agent ?? null,
    sessionId: row.session_id ?? null,
    replayed: row.replayed === 1,
  };
}

/** Reads `attempts_json`, accepting `duration_ms` (the documented field) or `durationMs`; never throws. */
export function parseAttempts(json: string): CallAttempt[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed
    .filter((a: unknown): a is Record<string, unknown> => a !== null && typeof a === 'object')
    .map((a) => ({
      provider: typeof a.provider === 'string' ? a.provider : '',
      model: typeof a.model === 'string' ? a.model : '',
      status: typeof a.status === 'number' ? a.status : null,
      error: typeof a.error === 'string' ? a.error : null,
      durationMs: typeof a.duration_ms === 'number' ? a.duration_ms : typeof a.durationMs === 'number' ? a.durationMs : 0,
    }));
}
