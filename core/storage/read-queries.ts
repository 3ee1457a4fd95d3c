/**
 * The dashboards' heavier reads, by name, so they can run on the read thread (read-thread.ts) with its
 * own connection instead of on the request thread: a text search or a day of attempt statistics over a
 * large audit trail takes long enough to stall every other request.
 */
import { usageSummary } from './audit-queries.ts';
import type { UsageSummaryOptions } from './audit-queries.ts';
import type { Database } from './db.ts';
import { providerStats, searchCalls, spendByDayAndModel, unpricedByKey } from './log-search.ts';
import type { LogSearch } from './log-search.ts';

export const READ_QUERIES = {
  usageSummary: (db: Database, options: UsageSummaryOptions) => usageSummary(db, options),
  spendByDayAndModel: (db: Database, since: number | undefined) => spendByDayAndModel(db, since),
  unpricedByKey: (db: Database, since: number | undefined) => unpricedByKey(db, since),
  providerStats: (db: Database, range: { since: number; until: number; buckets: number }) => providerStats(db, range),
  searchCalls: (db: Database, search: LogSearch) => searchCalls(db, search),
};

export type ReadQueryName = keyof typeof READ_QUERIES;
export type ReadQueryArg<N extends ReadQueryName> = Parameters<(typeof READ_QUERIES)[N]>[1];
export type ReadQueryResult<N extends ReadQueryName> = ReturnType<(typeof READ_QUERIES)[N]>;

export interface ReadRequest {
  id: number;
  name: ReadQueryName;
  arg: unknown;
}

export type ReadReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; name: string; message: string; code?: string };

/** Runs one named query; a thrown error becomes a reply the caller turns back into an error. */
export function runReadQuery(db: Database, request: ReadRequest): ReadReply {
  try {
    const query = READ_QUERIES[request.name] as (db: Database, arg: unknown) => unknown;
    if (typeof query !== 'function') throw new Error(`unknown read query "${String(request.name)}"`);
    return { id: request.id, ok: true, value: query(db, request.arg) };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    const code = (e as { code?: unknown }).code;
    return { id: request.id, ok: false, name: e.name, message: e.message, ...(typeof code === 'string' ? { code } : {}) };
  }
}
