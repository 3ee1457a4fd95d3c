/**
 * Budget notifications: at 50 %, 80 % and 100 % of a key's budget, each shown once per key and budget
 * period. Pure: the tray passes what it remembered from the previous snapshots and the new snapshot,
 * and gets back the notifications to show and what to remember next.
 *
 * Rules:
 * - a threshold fires when the key's spend reaches it and it has not fired yet in this period;
 * - when one snapshot jumps over several thresholds (40 % → 100 %), only the highest is shown and the
 *   lower ones count as fired (one notification, not three);
 * - a new period (the next local day or month, as the gateway counts budgets) re-arms all three, and so
 *   does a change of the budget amount (a raised budget has its own 50 %);
 * - the first snapshot the tray sees announces a key already past a threshold once (the highest).
 */
import type { AdminSnapshot, KeySummary } from './admin-client.ts';
import { money } from 'gateway-local';
import { percentUsed } from './tray-model.ts';

export const THRESHOLDS = [50, 80, 100] as const;
export type Threshold = (typeof THRESHOLDS)[number];

export interface BudgetAlert {
  key: string;
  threshold: Threshold;
  /** Whole percent used (may exceed 100). */
  percent: number;
  spentUsd: number;
  budgetUsd: number;
  period: 'total' | 'daily' | 'monthly';
  title: string;
  body: string;
}

/** What the tray remembers per key name between snapshots. */
export interface KeyAlertMemory {
  /** The period and budget the fired thresholds belong to. */
  arm: string;
  fired: Threshold[];
}

export type AlertMemory = Readonly<Record<string, KeyAlertMemory>>;

/**
 * The budget period containing `at` (local time, like the gateway's own `periodStart`): `2025-06-01`,
 * `2025-06` or `total`.
 */
export function periodId(period: string | null, at: number): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, '0');
  if (period === 'daily') return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  if (period === 'monthly') return `${d.getFullYear()}-${p(d.getMonth() + 1)}`;
  return 'total';
}

const asPeriod = (p: string | null): BudgetAlert['period'] => (p === 'daily' || p === 'monthly' ? p : 'total');

function describe(k: KeySummary & { budget_usd: number }, threshold: Threshold, percent: number): { title: string; body: string } {
  const period = asPeriod(k.budget_period);
  const what = `${money(k.spent_usd)} of its ${money(k.budget_usd)} ${period === 'total' ? '' : `${period} `}budget`;
  if (threshold === 100) {
    const until = period === 'daily' ? 'until tomorrow' : period === 'monthly' ? 'until next month' : 'until the budget is raised';
    return { title: `Budget spent: ${k.name}`, body: `Key "${k.name}" has spent ${what}; its calls are refused (402) ${until}.` };
  }
  return { title: `Budget ${threshold}% used: ${k.name}`, body: `Key "${k.name}" has spent ${what} (${percent}%).` };
}

/**
 * `at` is when the snapshot was requested (not when it arrived): the gateway computed it no earlier,
 * so a snapshot taken across midnight can only delay a re-arm to the next snapshot, never re-arm early
 * while the gateway still reports yesterday's spend.
 */
export function budgetAlerts(previous: AlertMemory | null, snapshot: AdminSnapshot, at: number): { alerts: BudgetAlert[]; memory: AlertMemory } {
  const memory: Record<string, KeyAlertMemory> = {};
  const alerts: BudgetAlert[] = [];
  for (const k of snapshot.keys) {
    if (k.budget_usd === null || k.state === 'deleted') continue;
    const budget = k.budget_usd;
    const arm = `${periodId(k.budget_period, at)}|${budget}`;
    const before = previous?.[k.name];
    const fired = new Set<Threshold>(before && before.arm === arm ? before.fired : []);
    const percent = percentUsed(k.spent_usd, budget);
    const reached = THRESHOLDS.filter((t) => percent >= t && !fired.has(t));
    // A disabled key spends nothing: remember its state, but it has nothing new to announce.
    if (reached.length > 0 && k.state === 'active') {
      const top = reached[reached.length - 1];
      alerts.push({ key: k.name, threshold: top, percent, spentUsd: k.spent_usd, budgetUsd: budget, period: asPeriod(k.budget_period), ...describe({ ...k, budget_usd: budget }, top, percent) });
      for (const t of reached) fired.add(t);
    }
    memory[k.name] = { arm, fired: THRESHOLDS.filter((t) => fired.has(t)) };
  }
  return { alerts, memory };
}
