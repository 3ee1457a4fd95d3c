/**
 * Per-key budgets that hold under concurrency. Spend per key and period is loaded once from SQLite,
 * then kept in memory as calls finish; calls in flight hold a reservation (their estimated cost), so
 * N parallel requests cannot all slip under the same remaining dollar.
 */
import type { Database } from 'better-sqlite3';
import { insufficientQuota } from '../errors.ts';
import { spendForKey } from '../storage/audit-queries.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import { formatUsd } from '../pricing/cost.ts';

export type BudgetPeriod = 'total' | 'daily' | 'monthly';

export function periodStart(period: BudgetPeriod, now = new Date()): number {
  if (period === 'daily') return new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  if (period === 'monthly') return new Date(now.getFullYear(), now.getMonth(), 1).getTime();
  return 0;
}

interface KeySpend {
  periodStart: number;
  spent: number;
  reserved: number;
}

export class BudgetTracker {
  private readonly db: Database;
  private readonly spend = new Map<string, KeySpend>();

  constructor(db: Database) {
    this.db = db;
  }

  private entry(key: StoredKey): KeySpend {
    const start = periodStart(key.budgetPeriod ?? 'total');
    let e = this.spend.get(key.id);
    if (!e || e.periodStart !== start) {
      e = { periodStart: start, spent: spendForKey(this.db, key.id, start), reserved: e?.reserved ?? 0 };
      this.spend.set(key.id, e);
    }
    return e;
  }

  /** Throws 402 when the key cannot afford `estimate` more; otherwise reserves it. Returns the release function. */
  reserve(key: StoredKey, estimate: number): (actualCost: number | null) => void {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return () => undefined;
    const e = this.entry(key);
    const committed = e.spent + e.reserved;
    if (committed >= key.budgetUsd || committed + estimate > key.budgetUsd) {
      const period = key.budgetPeriod && key.budgetPeriod !== 'total' ? ` ${key.budgetPeriod}` : '';
      throw insufficientQuota(
        `Key "${key.name}" has used its${period} budget: $${formatUsd(e.spent)} spent of $${formatUsd(key.budgetUsd)}` +
          `${e.reserved > 0 ? ` (plus $${formatUsd(e.reserved)} held by calls in flight)` : ''}. ` +
          `Raise it with \`gateway keys update ${key.name} --budget USD\`.`,
      );
    }
    e.reserved += estimate;
    let released = false;
    return (actualCost) => {
      if (released) return;
      released = true;
      const cur = this.entry(key);
      cur.reserved = Math.max(0, cur.reserved - estimate);
      if (actualCost) cur.spent += actualCost;
    };
  }

  /** Adds a cost for a key without a reservation (keys with no budget still get spend tracked lazily). */
  snapshot(key: StoredKey): { spent: number; reserved: number; periodStart: number } | null {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return null;
    const e = this.entry(key);
    return { spent: e.spent, reserved: e.reserved, periodStart: e.periodStart };
  }

  /** Forget cached spend (after `logs purge` or a budget change). */
  invalidate(): void {
    for (const [id, e] of this.spend) if (e.reserved === 0) this.spend.delete(id);
  }
}
