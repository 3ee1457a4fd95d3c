/**
 * The audit trail's queries on PostgreSQL: the same answers as the SQLite ones (`../audit-queries.ts`,
 * `../log-search.ts`), with their row mapping. Days are local days of this process's time zone, as
 * SQLite's 'localtime' gives them.
 */
import { callToJson, type CallJson } from '../../call-json.ts';
import type { CallQueries, DayModelSpend } from '../../state/gateway-state.ts';
import {
  SUMMARY_COLUMNS,
  toCallSummary,
  type CallDbRow,
  type CallSummary,
  type ListCallsOptions,
  type PurgeOptions,
  type SpendTotals,
  type StoredCall,
  type UsageGrouping,
  type UsageSummaryOptions,
  type UsageSummaryRow,
} from '../audit-queries.ts';
import {
  searchLimit,
  searchTextClause,
  searchTextPattern,
  statusClause,
  summarizeProviderStats,
  type AttemptPoint,
  type LogSearch,
  type ProviderStats,
} from '../log-search.ts';
import type { Pool } from './pg-pool.ts';

const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const localDay = (column: string, tzParam: string): string => `to_char(to_timestamp(${column} / 1000.0) AT TIME ZONE ${tzParam}, 'YYYY-MM-DD')`;

/** Collects positional parameters: `p.add(v)` gives `$n`. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

const where = (clauses: string[]): string => (clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '');

export class PgCallQueries implements CallQueries {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async listCalls(o: ListCallsOptions): Promise<CallSummary[]> {
    const p = new Params();
    const w: string[] = [];
    if (o.beforeTime !== undefined) w.push(`time < ${p.add(o.beforeTime)}`);
    if (o.sinceTime !== undefined) w.push(`time >= ${p.add(o.sinceTime)}`);
    if (o.keyName !== undefined) w.push(`key_name = ${p.add(o.keyName)}`);
    const sql = `SELECT ${SUMMARY_COLUMNS} FROM calls ${where(w)} ORDER BY time DESC, seq DESC LIMIT ${p.add(Math.max(0, Math.trunc(o.limit)))}`;
    return (await this.#pool.query<CallDbRow>(sql, p.values)).rows.map(toCallSummary);
  }

  async getCall(id: string): Promise<StoredCall | null> {
    const r = await this.#pool.query<CallDbRow>(`SELECT * FROM calls WHERE id = $1`, [id]);
    const row = r.rows[0];
    if (row === undefined) return null;
    return { ...toCallSummary(row), requestBody: row.request_body ?? null, responseBody: row.response_body ?? null };
  }

  async usageSummary(o: UsageSummaryOptions): Promise<UsageSummaryRow[]> {
    const p = new Params();
    const groups: Record<UsageGrouping, () => string> = {
      key: () => `c.key_id, k.name, k.state`,
      model: () => `COALESCE(c.model, c.model_requested, '(none)')`,
      provider: () => `COALESCE(c.provider, '(none)')`,
      day: () => localDay('c.time', p.add(TZ)),
    };
    const groupBy = groups[o.by]?.();
    if (groupBy === undefined) throw new Error(`unknown usage grouping "${String(o.by)}"`);
    const label =
      o.by === 'key'
        ? `CASE WHEN c.key_id IS NULL THEN '(no key)'
                WHEN k.state = 'deleted' THEN COALESCE(k.name, MAX(c.key_name)) || ' (deleted)'
                ELSE COALESCE(k.name, MAX(c.key_name), c.key_id) END`
        : groupBy;
    const w: string[] = [];
    if (o.since !== undefined) w.push(`c.time >= ${p.add(o.since)}`);
    if (o.until !== undefined) w.push(`c.time < ${p.add(o.until)}`);
    const order = o.by === 'day' ? 'ORDER BY 1 ASC' : 'ORDER BY cost_usd DESC, requests DESC, 1 ASC';
    const sql = `
      SELECT ${label} AS "group", COUNT(*) AS requests,
             COALESCE(SUM(c.input_tokens), 0)::float8 AS input_tokens, COALESCE(SUM(c.output_tokens), 0)::float8 AS output_tokens,
             COALESCE(SUM(c.cached_tokens), 0)::float8 AS cached_tokens, COALESCE(SUM(c.cache_write_tokens), 0)::float8 AS cache_write_tokens,
             COALESCE(SUM(c.reasoning_tokens), 0)::float8 AS reasoning_tokens, COALESCE(SUM(c.cost_usd), 0)::float8 AS cost_usd,
             COUNT(*) FILTER (WHERE c.status >= 400) AS errors,
             COUNT(*) FILTER (WHERE c.pricing = 'unpriced' AND c.provider IS NOT NULL) AS unpriced
      FROM calls c ${o.by === 'key' ? 'LEFT JOIN keys k ON k.id = c.key_id' : ''}
      ${where(w)} GROUP BY ${groupBy} ${order}`;
    return (await this.#pool.query<UsageSummaryRow>(sql, p.values)).rows;
  }

  async spendForKey(keyId: string, sinceMs?: number): Promise<number> {
    const r = await this.#pool.query<{ spent: number }>(`SELECT COALESCE(SUM(cost_usd), 0)::float8 AS spent FROM calls WHERE key_id = $1 AND time >= $2`, [
      keyId,
      sinceMs ?? Number.MIN_SAFE_INTEGER,
    ]);
    return r.rows[0]?.spent ?? 0;
  }

  async spendForKeyBetween(keyId: string, fromMs: number, toMs: number): Promise<number> {
    const r = await this.#pool.query<{ spent: number }>(
      `SELECT COALESCE(SUM(cost_usd), 0)::float8 AS spent FROM calls WHERE key_id = $1 AND time >= $2 AND time < $3`,
      [keyId, fromMs, toMs],
    );
    return r.rows[0]?.spent ?? 0;
  }

  async spendTotals(range: { todayStartMs: number; monthStartMs: number }): Promise<SpendTotals> {
    const r = await this.#pool.query<{ today: number; month: number }>(
      `SELECT COALESCE(SUM(cost_usd) FILTER (WHERE time >= $1), 0)::float8 AS today, COALESCE(SUM(cost_usd) FILTER (WHERE time >= $2), 0)::float8 AS month
       FROM calls WHERE time >= LEAST($1::bigint, $2::bigint)`,
      [range.todayStartMs, range.monthStartMs],
    );
    return { todayUsd: r.rows[0]?.today ?? 0, monthUsd: r.rows[0]?.month ?? 0 };
  }

  async spendSinceBy(by: 'key' | 'provider', sinceDayStartMs: number): Promise<Map<string, number>> {
    const column = by === 'key' ? 'key_id' : 'provider';
    const r = await this.#pool.query<{ k: string; spent: number }>(
      `SELECT ${column} AS k, COALESCE(SUM(cost_usd), 0)::float8 AS spent FROM spend_daily WHERE day_start >= $1 GROUP BY ${column}`,
      [sinceDayStartMs],
    );
    return new Map(r.rows.map((x) => [x.k, x.spent]));
  }

  async spendTotalsFromDaily(range: { todayStartMs: number; monthStartMs: number }): Promise<SpendTotals> {
    const r = await this.#pool.query<{ today: number; month: number }>(
      `SELECT COALESCE(SUM(cost_usd) FILTER (WHERE day_start >= $1), 0)::float8 AS today, COALESCE(SUM(cost_usd) FILTER (WHERE day_start >= $2), 0)::float8 AS month
       FROM spend_daily WHERE day_start >= LEAST($1::bigint, $2::bigint)`,
      [range.todayStartMs, range.monthStartMs],
    );
    return { todayUsd: r.rows[0]?.today ?? 0, monthUsd: r.rows[0]?.month ?? 0 };
  }

  async purgeCalls(o: PurgeOptions): Promise<number> {
    const now = o.now ?? Date.now();
    const cutoffs: number[] = [];
    if (o.olderThanMs !== undefined) cutoffs.push(now - o.olderThanMs);
    if (o.beforeTime !== undefined) cutoffs.push(o.beforeTime);
    let deleted = 0;
    if (cutoffs.length > 0) deleted += (await this.#pool.query(`DELETE FROM calls WHERE time < $1`, [Math.max(...cutoffs)])).rowCount ?? 0;
    if (o.keepMaxRows !== undefined) {
      const keep = Math.max(0, Math.trunc(o.keepMaxRows));
      const r = await this.#pool.query(`DELETE FROM calls WHERE seq IN (SELECT seq FROM calls ORDER BY time DESC, seq DESC OFFSET $1)`, [keep]);
      deleted += r.rowCount ?? 0;
    }
    return deleted;
  }

  async searchCalls(q: LogSearch): Promise<CallJson[]> {
    const p = new Params();
    const w: string[] = [];
    if (q.key !== undefined) w.push(`key_name = ${p.add(q.key)}`);
    if (q.model !== undefined) {
      const m = p.add(q.model);
      w.push(`(model = ${m} OR model_requested = ${m})`);
    }
    if (q.status !== undefined) w.push(statusClause(q.status));
    if (q.since !== undefined) w.push(`time >= ${p.add(q.since)}`);
    if (q.until !== undefined) w.push(`time < ${p.add(q.until)}`);
    if (q.before !== undefined) w.push(`time < ${p.add(q.before)}`);
    const text = searchTextPattern(q.text);
    if (text !== null) w.push(searchTextClause(p.add(text)));
    const limit = p.add(searchLimit(q));
    const sql = `SELECT ${SUMMARY_COLUMNS} FROM calls ${where(w)} ORDER BY time DESC, seq DESC LIMIT ${limit}`;
    return (await this.#pool.query<CallDbRow>(sql, p.values)).rows.map((r) => callToJson(toCallSummary(r)));
  }

  async providerStats(range: { since: number; until: number; buckets: number }): Promise<ProviderStats[]> {
    const r = await this.#pool.query<AttemptPoint>(
      `SELECT c.time AS time, a->>'provider' AS provider, (a->>'status')::int AS status,
              COALESCE((a->>'duration_ms')::float8, (a->>'durationMs')::float8) AS duration
       FROM calls c, jsonb_array_elements(CASE WHEN jsonb_typeof(c.attempts_json::jsonb) = 'array' THEN c.attempts_json::jsonb ELSE '[]'::jsonb END) a
       WHERE c.time >= $1 AND c.time < $2`,
      [range.since, range.until],
    );
    return summarizeProviderStats(r.rows, range);
  }

  async spendByDayAndModel(since: number | undefined): Promise<DayModelSpend[]> {
    const r = await this.#pool.query<DayModelSpend>(
      `SELECT ${localDay('time', '$2')} AS day, COALESCE(model, model_requested, '(none)') AS model,
              COALESCE(SUM(cost_usd), 0)::float8 AS cost_usd, COUNT(*) AS requests,
              COUNT(*) FILTER (WHERE pricing = 'unpriced' AND status < 400 AND provider IS NOT NULL) AS unpriced,
              COUNT(*) FILTER (WHERE pricing = 'estimated') AS estimated
       FROM calls WHERE time >= $1 GROUP BY 1, 2 ORDER BY 1, 3 DESC`,
      [since ?? Number.MIN_SAFE_INTEGER, TZ],
    );
    return r.rows;
  }

  async unpricedByKey(since: number | undefined): Promise<Array<{ key: string; unpriced: number }>> {
    const r = await this.#pool.query<{ key: string; unpriced: number }>(
      `SELECT COALESCE(key_name, '(no key)') AS key, COUNT(*) AS unpriced FROM calls
       WHERE time >= $1 AND pricing = 'unpriced' AND status < 400 AND provider IS NOT NULL GROUP BY 1`,
      [since ?? Number.MIN_SAFE_INTEGER],
    );
    return r.rows;
  }
}
