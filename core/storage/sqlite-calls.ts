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
import type { ReadRunner } from './read-runner.ts';
import { providerStats, searchCalls, spendByDayAndModel, unpricedByKey, type LogSearch } from './log-search.ts';

export class SqliteCallQueries implements CallQueries {
  readonly #db: Database;
  readonly #reads: ReadRunner | null;

  /** With `reads`, the dashboards' heavier queries run on the read thread (read-runner.ts) and answer promises. */
  constructor(db: Database, reads: ReadRunner | null = null) {
    this.#db = db;
    this.#reads = reads;
  }

  listCalls(options: ListCallsOptions) {
    return listCalls(this.#db, options);
  }
  getCall(id: string) {
    return getCall(this.#db, id);
  }
  usageSummary(options: UsageSummaryOptions) {
    return this.#reads ? this.#reads.run('usageSummary', options) : usageSummary(this.#db, options);
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
    return this.#reads ? this.#reads.run('searchCalls', q) : searchCalls(this.#db, q);
  }
  providerStats(range: { since: number; until: number; buckets: number }) {
    return this.#reads ? this.#reads.run('providerStats', range) : providerStats(this.#db, range);
  }
  spendByDayAndModel(since: number | undefined) {
    return this.#reads ? this.#reads.run('spendByDayAndModel', since) : spendByDayAndModel(this.#db, since);
  }
  unpricedByKey(since: number | undefined) {
    return this.#reads ? this.#reads.run('unpricedByKey', since) : unpricedByKey(this.#db, since);
  }
}
