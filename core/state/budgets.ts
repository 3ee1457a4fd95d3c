/**
 * Per-key budgets as the gateway sees them, whatever keeps the counters: `reserve` holds a call's
 * worst case against what the key has spent plus what calls in flight hold, and the function it
 * returns settles the call with its real cost. One process: `BudgetTracker` (memory over SQLite's
 * spend). A team: `RedisBudgets` (one counter per key and period in Redis, shared by every instance).
 */
import { insufficientQuota, type GatewayError } from '../errors.ts';
import { formatUsd, roundUsd } from '../pricing/cost.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import type { Awaitable } from './awaitable.ts';

export type BudgetPeriod = 'total' | 'daily' | 'monthly';

/** Settles a reservation with the call's real cost (null: nothing was spent). Idempotent. */
export type SettleBudget = (actualCost: number | null) => void;
/** What the client could change (a smaller max_tokens), given what remains. */
export type BudgetHint = () => (remainingUsd: number) => string;

export interface BudgetSnapshot {
  spent: number;
  reserved: number;
  periodStart: number;
}

export interface Budgets {
  /** Throws (or rejects with) a 402 when the key cannot afford `worstCase` more; otherwise reserves it. */
  reserve(key: StoredKey, worstCase: number, hint?: BudgetHint): Awaitable<SettleBudget>;
  snapshot(key: StoredKey): Awaitable<BudgetSnapshot | null>;
  /** Forget cached spend (after `logs purge` or a budget change). */
  invalidate(): void;
  /** Gives up what this process holds for calls in flight (a team's lease), once they settled: on a stop. */
  close?(): Promise<void>;
}

export function periodStart(period: BudgetPeriod, now = new Date()): number {
  if (period === 'daily') return new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  if (period === 'monthly') return new Date(now.getFullYear(), now.getMonth(), 1).getTime();
  return 0;
}

/** A worst case as a reservable amount: a broken estimate reserves nothing rather than poison the counter. */
export const reservable = (worstCase: number): number => (Number.isFinite(worstCase) && worstCase > 0 ? worstCase : 0);

/** Whether a reservation of `estimate` must be refused, given what is spent and held. */
export function overBudget(budgetUsd: number, spent: number, reserved: number, estimate: number): boolean {
  const committed = spent + reserved;
  return committed >= budgetUsd || committed + estimate > budgetUsd;
}

/** The 402 for a refused reservation: what was spent, what calls in flight hold, what to do. */
export function budgetRefusal(key: StoredKey, spent: number, reserved: number, estimate: number, hint?: BudgetHint): GatewayError {
  const budgetUsd = key.budgetUsd ?? 0;
  const committed = spent + reserved;
  const period = key.budgetPeriod && key.budgetPeriod !== 'total' ? ` ${key.budgetPeriod}` : '';
  const remaining = Math.max(0, budgetUsd - committed);
  const held = reserved > 0 ? ` (plus $${formatUsd(roundUsd(reserved))} held by calls in flight)` : '';
  const raise = `Raise it with \`gateway keys update ${key.name} --budget USD\`.`;
  if (spent >= budgetUsd || (estimate === 0 && committed >= budgetUsd)) {
    return insufficientQuota(`Key "${key.name}" has used its${period} budget: $${formatUsd(roundUsd(spent))} spent of $${formatUsd(budgetUsd)}${held}. ${raise}`);
  }
  return insufficientQuota(
    `This call could cost up to $${formatUsd(roundUsd(estimate))} (its prompt plus the most output it allows), and key "${key.name}" has ` +
      `$${formatUsd(roundUsd(remaining))} of its${period} budget left: $${formatUsd(roundUsd(spent))} spent of $${formatUsd(budgetUsd)}${held}.` +
      `${hint?.()(remaining) ?? ''} ${raise}`,
  );
}
