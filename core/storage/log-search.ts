/**
 * Server-side search over the audit trail for the dashboards: calls filtered by key, model, status,
 * time range and free text, and per-provider attempt statistics (latency, error rate) over time.
 * Read-only; the aggregates for `gateway usage` live in audit-queries.ts.
 */
import { callToJson } from '../call-json.ts';
import type { CallJson } from '../call-json.ts';
import { SUMMARY_COLUMNS, toCallSummary } from './audit-queries.ts';
import type { CallDbRow } from './audit-queries.ts';
import type { Database } from './db.ts';
import { USAGE_ROWS_CTE, usageRangeParams } from './usage-rollup.ts';
import type { UsageRangeParams } from './usage-rollup.ts';

/** `ok` = below 400, `error` = 400 or more, or one exact code, or a class such as `4xx`. */
export type StatusFilter = 'ok' | 'error' | number | `${1 | 2 | 3 | 4 | 5}xx`;

export interface LogSearch {
  key?: string;
  /** Matches the resolved or the requested model. */
  model?: string;
  status?: StatusFilter;
  /** Unix ms, inclusive. */
  since?: number;
  /** Unix ms, exclusive. */
  until?: number;
  /** Case-insensitive substring of the id, key, model, provider, endpoint or error. */
  text?: string;
  limit: number;
  /** Unix ms; only calls strictly before it (paging back). */
  before?: number;
}

/** Parses a status filter as typed by a user (`200`, `4xx`, `error`, `ok`); null when it is none of those. */
export function parseStatusFilter(raw: string): StatusFilter | null {
  const s = raw.trim().toLowerCase();
  if (s === 'ok' || s === 'error') return s;
  if (/^[1-5]xx$/.test(s)) return s as StatusFilter;
  if (/^[1-5]\d\d$/.test(s)) return Number(s);
  return null;
}

/** The SQL condition for a status filter; the same text in SQLite and PostgreSQL. */
export function statusClause(status: StatusFilter): string {
  if (status === 'ok') return 'status < 400';
  if (status === 'error') return 'status >= 400';
  if (typeof status === 'number') return `status = ${Math.trunc(status)}`;
  const hundreds = Number(status[0]) * 100;
  return `status >= ${hundreds} AND status < ${hundreds + 100}`;
}

const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The LIKE pattern for a free-text search, or null when the text is blank. */
export function searchTextPattern(text: string | undefined): string | null {
  if (text === undefined || text.trim() === '') return null;
  return `%${escapeLike(text.trim().toLowerCase())}%`;
}

const SEARCH_COLUMNS = ['id', 'key_name', 'model', 'model_requested', 'provider', 'endpoint', 'error_type', 'error_message', 'CAST(status AS TEXT)'];

/** The free-text condition over the searched columns, with `param` the placeholder holding the pattern. */
export const searchTextClause = (param: string): string =>
  `(${SEARCH_COLUMNS.map((c) => `lower(COALESCE(${c}, '')) LIKE ${param} ESCAPE '\\'`).join(' OR ')})`;

export const searchLimit = (q: LogSearch): number => Math.max(0, Math.min(10_000, Math.trunc(q.limit)));

/** Newest first. */
export function searchCalls(db: Database, q: LogSearch): CallJson[] {
  const where: string[] = [];
  const params: Record<string, string | number> = { limit: searchLimit(q) };
  if (q.key !== undefined) {
    where.push('key_name = @key');
    params.key = q.key;
  }
  if (q.model !== undefined) {
    where.push('(model = @model OR model_requested = @model)');
    params.model = q.model;
  }
  if (q.status !== undefined) where.push(statusClause(q.status));
  if (q.since !== undefined) {
    where.push('time >= @since');
    params.since = q.since;
  }
  if (q.until !== undefined) {
    where.push('time < @until');
    params.until = q.until;
  }
  if (q.before !== undefined) {
    where.push('time < @before');
    params.before = q.before;
  }
  const text = searchTextPattern(q.text);
  if (text !== null) {
    params.text = text;
    where.push(searchTextClause('@text'));
  }
  const sql = `SELECT ${SUMMARY_COLUMNS}
    FROM calls ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY time DESC, rowid DESC LIMIT @limit`;
  return db.prepare<[Record<string, string | number>], CallDbRow>(sql).all(params).map((r) => callToJson(toCallSummary(r)));
}

/** The columns of the CSV export, in order: the `logs --json` fields. */
export const CSV_COLUMNS = [
  'id', 'time', 'key', 'endpoint', 'model_requested', 'model', 'provider', 'status', 'error_type', 'input_tokens',
  'output_tokens', 'cached_tokens', 'reasoning_tokens', 'cost_usd', 'pricing', 'latency_ms', 'ttft_ms', 'attempts',
] as const satisfies readonly (keyof CallJson)[];

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = String(v);
  // A cell starting with = + - @ is a formula to spreadsheet apps: quote it as text.
  if (/^[=+\-@\t\r]/.test(s) && typeof v === 'string') s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function callsToCsv(calls: CallJson[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const c of calls) lines.push(CSV_COLUMNS.map((col) => csvCell(c[col])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

export interface ProviderBucket {
  /** Unix ms at the bucket's start. */
  start: number;
  attempts: number;
  errors: number;
  avg_ms: number | null;
  p95_ms: number | null;
}

export interface ProviderStats {
  provider: string;
  attempts: number;
  errors: number;
  error_rate: number;
  avg_ms: number | null;
  p95_ms: number | null;
  buckets: ProviderBucket[];
}

function p95(sorted: number[]): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
}

const avg = (xs: number[]): number | null => (xs.length === 0 ? null : Math.round(xs.reduce((a, b) => a + b, 0) / xs.length));

/**
 * Every attempt (not only the call's final provider, so a provider that failed over counts its
 * failures) in `[since, until)`, split into `buckets` equal slices. An attempt is an error when it got
 * no answer or a status of 400 or more; latency is over the successful attempts.
 */
export function providerStats(db: Database, range: { since: number; until: number; buckets: number }): ProviderStats[] {
  const rows = db
    .prepare<[number, number], AttemptPoint>(
      `SELECT c.time AS time, json_extract(a.value, '$.provider') AS provider, json_extract(a.value, '$.status') AS status,
              COALESCE(json_extract(a.value, '$.duration_ms'), json_extract(a.value, '$.durationMs')) AS duration
       FROM calls c, json_each(c.attempts_json) a
       WHERE c.time >= ? AND c.time < ? AND json_valid(c.attempts_json)`,
    )
    .all(range.since, range.until);
  return summarizeProviderStats(rows, range);
}

/** One attempt as the statistics read it (from either store). */
export interface AttemptPoint {
  time: number;
  provider: string | null;
  status: number | null;
  duration: number | null;
}

/** Attempts into per-provider totals and `buckets` equal time slices. */
export function summarizeProviderStats(rows: AttemptPoint[], range: { since: number; until: number; buckets: number }): ProviderStats[] {
  const n = Math.max(1, Math.min(500, Math.trunc(range.buckets)));
  const width = Math.max(1, (range.until - range.since) / n);
  const by = new Map<string, { ok: number[][]; errors: number[]; attempts: number[] }>();
  for (const r of rows) {
    if (!r.provider) continue;
    let s = by.get(r.provider);
    if (!s) by.set(r.provider, (s = { ok: Array.from({ length: n }, () => []), errors: new Array<number>(n).fill(0), attempts: new Array<number>(n).fill(0) }));
    const i = Math.min(n - 1, Math.floor((r.time - range.since) / width));
    s.attempts[i]++;
    if (r.status === null || r.status >= 400) s.errors[i]++;
    else if (typeof r.duration === 'number') s.ok[i].push(r.duration);
  }
  return [...by.entries()]
    .map(([provider, s]) => {
      const all = s.ok.flat().sort((a, b) => a - b);
      const attempts = s.attempts.reduce((a, b) => a + b, 0);
      const errors = s.errors.reduce((a, b) => a + b, 0);
      return {
        provider,
        attempts,
        errors,
        error_rate: attempts === 0 ? 0 : errors / attempts,
        avg_ms: avg(all),
        p95_ms: p95(all),
        buckets: s.attempts.map((count, i) => ({
          start: Math.round(range.since + i * width),
          attempts: count,
          errors: s.errors[i],
          avg_ms: avg(s.ok[i]),
          p95_ms: p95([...s.ok[i]].sort((a, b) => a - b)),
        })),
      };
    })
    .sort((a, b) => a.provider.localeCompare(b.provider));
}

/** Spend per day (local time) and model, for a stacked chart; from the running totals (usage-rollup.ts). */
export function spendByDayAndModel(db: Database, since: number | undefined): Array<{ day: string; model: string; cost_usd: number; requests: number; unpriced: number; estimated: number }> {
  return db
    .prepare<[UsageRangeParams], { day: string; model: string; cost_usd: number; requests: number; unpriced: number; estimated: number }>(
      `WITH ${USAGE_ROWS_CTE}
       SELECT strftime('%Y-%m-%d', t / 1000, 'unixepoch', 'localtime') AS day, model,
              TOTAL(cost_usd) AS cost_usd, SUM(requests) AS requests, SUM(unpriced_ok) AS unpriced, SUM(estimated) AS estimated
       FROM usage_rows GROUP BY 1, 2 ORDER BY 1, 3 DESC`,
    )
    .all(usageRangeParams(since));
}

/**
 * Calls that reached a provider, succeeded, and have no price, per key name at the time of the call:
 * what a key's priced sum leaves out. Refused calls cost nothing and are not counted.
 */
export function unpricedByKey(db: Database, since: number | undefined): Array<{ key: string; unpriced: number }> {
  return db
    .prepare<[UsageRangeParams], { key: string; unpriced: number }>(
      `WITH ${USAGE_ROWS_CTE}
       SELECT CASE WHEN key_name = '' THEN '(no key)' ELSE key_name END AS key, SUM(unpriced_ok) AS unpriced
       FROM usage_rows GROUP BY 1 HAVING SUM(unpriced_ok) > 0`,
    )
    .all(usageRangeParams(since));
}
