/**
 * What a key has spent and has left, as the CLI's `keys list` and the admin API's key list both report it:
 * a key with a budget is measured over its budget's period, one without over today.
 */
import type { BudgetPeriod } from '../gateway/budget.ts';
import { roundUsd } from '../pricing/cost.ts';
import type { StoredKey } from '../storage/keys-repo.ts';

export interface KeySpend {
  spent_usd: number;
  spent_period: BudgetPeriod;
  remaining_usd: number | null;
}

/** The period a key's spend is reported over. */
export const spendPeriod = (k: Pick<StoredKey, 'budgetUsd' | 'budgetPeriod'>): BudgetPeriod => (k.budgetUsd !== null ? (k.budgetPeriod ?? 'total') : 'daily');

/** `spent`: the key's spend over `spendPeriod(k)`. Rounded to the ledger's unit: a sum of rows reads 0.006710000000000001. */
export function keySpendFigures(k: Pick<StoredKey, 'budgetUsd' | 'budgetPeriod'>, spent: number): KeySpend {
  const s = roundUsd(spent);
  return { spent_usd: s, spent_period: spendPeriod(k), remaining_usd: k.budgetUsd !== null ? roundUsd(Math.max(0, k.budgetUsd - s)) : null };
}
