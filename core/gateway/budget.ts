/**
 * Per-key budgets of one process (SQLite): spend per key and period is loaded once from the audit
 * trail, then kept in memory as calls finish; calls in flight hold a reservation (their estimated
 * cost), so N parallel requests cannot all slip under the same remaining dollar. Every answer is
 * synchronous. A team shares its counters in Redis instead (`core/storage/team/redis-budgets.ts`).
 */
import type { StoredKey } from '../storage/keys-repo.ts';
import { budgetRefusal, overBudget, periodStart, reservable, type BudgetHint, type Budgets, type SettleBudget } from '../state/budgets.ts';

export { periodStart, type BudgetPeriod } from '../state/budgets.ts';

interface KeySpend {
  periodStart: number;
  spent: number;
  reserved: number;
}

/** What a key has spent since a unix ms, read from the audit trail (synchronously: SQLite). */
export type SpendSince = (keyId: string, sinceMs: number) => number;

export class BudgetTracker implements Budgets {
  private readonly spentSince: SpendSince;
  private readonly spend = new Map<string, KeySpend>();

  constructor(spentSince: SpendSince) {
    this.spentSince = spentSince;
  }

  private entry(key: StoredKey): KeySpend {
    const start = periodStart(key.budgetPeriod ?? 'total');
    let e = this.spend.get(key.id);
    if (!e || e.periodStart !== start) {
      const stored = this.spentSince(key.id, start);
      e = { periodStart: start, spent: Number.isFinite(stored) ? stored : 0, reserved: e?.reserved ?? 0 };
      this.spend.set(key.id, e);
    }
    return e;
  }

  /**
   * Throws 402 when the key cannot afford `worstCase` more (its remaining budget, after what calls in
   * flight hold, is smaller); otherwise reserves it. Returns the function that settles the call with its
   * real cost. `hint` adds what the client could change (a smaller max_tokens) to the refusal.
   */
  reserve(key: StoredKey, worstCase: number, hint?: BudgetHint): SettleBudget {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return () => undefined;
    const e = this.entry(key);
    const estimate = reservable(worstCase);
    if (overBudget(key.budgetUsd, e.spent, e.reserved, estimate)) throw budgetRefusal(key, e.spent, e.reserved, estimate, hint);
    e.reserved += estimate;
    let released = false;
    return (actualCost) => {
      if (released) return;
      released = true;
      const cur = this.entry(key);
      cur.reserved = Math.max(0, cur.reserved - estimate);
      if (cur.reserved < 1e-12) cur.reserved = 0;
      // A cost that is not a finite amount (a broken upstream) must never poison the running spend.
      if (actualCost !== null && Number.isFinite(actualCost) && actualCost > 0) cur.spent += actualCost;
    };
  }

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
