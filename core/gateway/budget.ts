/**
 * Per-key budgets that hold under concurrency. Spend per key and period is loaded once from SQLite,
 * then kept in memory as calls finish; calls in flight hold a reservation (their estimated cost), so
 * N parallel requests cannot all slip under the same remaining dollar.
 */
import type { Database } from 'better-sqlite3';
import { insufficientQuota } from '../errors.ts';
import { spendForKey } from '../storage/audit-queries.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import { formatUsd, roundUsd } from '../pricing/cost.ts';

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
      const stored = spendForKey(this.db, key.id, start);
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
  reserve(key: StoredKey, worstCase: number, hint?: () => (remainingUsd: number) => string): (actualCost: number | null) => void {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return () => undefined;
    const e = this.entry(key);
    const estimate = Number.isFinite(worstCase) && worstCase > 0 ? worstCase : 0;
    const committed = e.spent + e.reserved;
    if (committed >= key.budgetUsd || committed + estimate > key.budgetUsd) {
      const period = key.budgetPeriod && key.budgetPeriod !== 'total' ? ` ${key.budgetPeriod}` : '';
      const remaining = Math.max(0, key.budgetUsd - committed);
      const held = e.reserved > 0 ? ` (plus $${formatUsd(roundUsd(e.reserved))} held by calls in flight)` : '';
      const raise = `Raise it with \`gateway keys update ${key.name} --budget USD\`.`;
      if (e.spent >= key.budgetUsd || (estimate === 0 && committed >= key.budgetUsd)) {
        throw insufficientQuota(`Key "${key.name}" has used its${period} budget: $${formatUsd(roundUsd(e.spent))} spent of $${formatUsd(key.budgetUsd)}${held}. ${raise}`);
      }
      throw insufficientQuota(
        `This call could cost up to $${formatUsd(roundUsd(estimate))} (its prompt plus the most output it allows), and key "${key.name}" has ` +
          `$${formatUsd(roundUsd(remaining))} of its${period} budget left: $${formatUsd(roundUsd(e.spent))} spent of $${formatUsd(key.budgetUsd)}${held}.` +
          `${hint?.()(remaining) ?? ''} ${raise}`,
      );
    }
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
