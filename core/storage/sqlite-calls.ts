/** The audit trail's queries bound to one SQLite connection: `CallQueries`, answered synchronously. */
import type { CallQueries } from '../state/gateway-state.ts';
import {
  getCall,
  listCalls,
  purgeCalls,
  spendForKey,
  spendForKeyBetween,
  spendSinceBy,
  spendTotals,
  spendTotalsFromDaily,
  usageSummary,
  type ListCallsOptions,
  type PurgeOptions,
  type UsageSummaryOptions,
} from './audit-queries.ts';
import type { Database } from './db.ts';
import { providerStats, searchCalls, spendByDayAndModel, unpricedByKey, type LogSearch } from './log-search.ts';

export class SqliteCallQueries implements CallQueries {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  listCalls(options: ListCallsOptions) {
    return listCalls(this.#db, options);
  }
  getCall(id: string) {
    return getCall(this.#db, id);
  }
  usageSummary(options: UsageSummaryOptions) {
    return usageSummary(this.#db, options);
  }
  spendForKey(keyId: string, sinceMs?: number) {
    return spendForKey(this.#db, keyId, sinceMs);
  }
  spendForKeyBetween(keyId: string, fromMs: number, toMs: number) {
    return spendForKeyBetween(this.#db, keyId, fromMs, toMs);
  }
  spendTotals(range: { todayStartMs: number; monthStartMs: number }) {
    return spendTotals(this.#db, range);
  }
  spendSinceBy(by: 'key' | 'provider', sinceDayStartMs: number) {
    return spendSinceBy(this.#db, by, sinceDayStartMs);
  }
  spendTotalsFromDaily(range: { todayStartMs: number; monthStartMs: number }) {
    return spendTotalsFromDaily(this.#db, range);
  }
  purgeCalls(options: PurgeOptions) {
    return purgeCalls(this.#db, options);
  }
  searchCalls(q: LogSearch) {
    return searchCalls(this.#db, q);
  }
  providerStats(range: { since: number; until: number; buckets: number }) {
    return providerStats(this.#db, range);
  }
  spendByDayAndModel(since: number | undefined) {
    return spendByDayAndModel(this.#db, since);
  }
  unpricedByKey(since: number | undefined) {
    return unpricedByKey(this.#db, since);
  }
}
