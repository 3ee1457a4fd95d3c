/**
 * Budget notifications at 50/80/100 %: each fires once per key and period, a jump over several shows
 * only the highest, a new period (or a new budget amount) re-arms them, and a key without a budget,
 * deleted or disabled announces nothing.
 */
import { describe, expect, it } from 'vitest';
import { budgetAlerts, periodId } from '../../desktop/src/budget-alerts.ts';
import type { AlertMemory, BudgetAlert } from '../../desktop/src/budget-alerts.ts';
import type { AdminSnapshot, KeySummary } from '../../desktop/src/admin-client.ts';
import { percentUsed } from '../../desktop/src/tray-model.ts';

function key(name: string, spent: number, budget: number | null, period: 'daily' | 'monthly' | 'total' | null = 'daily', state = 'active'): KeySummary {
  return {
    name,
    prefix: 'sk-gw-abcd',
    state,
    budget_usd: budget,
    budget_period: budget === null ? null : period,
    spent_usd: spent,
    spent_period: budget === null ? 'daily' : (period ?? 'total'),
    remaining_usd: budget === null ? null : Math.max(0, budget - spent),
  };
}

const snapshot = (...keys: KeySummary[]): AdminSnapshot => ({
  spend: { today_usd: 0, month_usd: 0 },
  keys,
  providers: [],
  recent: [],
  price_version: null,
});

/** Feeds snapshots in order, returning the thresholds fired at each step. */
function run(steps: Array<{ snap: AdminSnapshot; at: number }>, start: AlertMemory | null = null): { fired: Array<Array<[string, number]>>; alerts: BudgetAlert[][]; memory: AlertMemory | null } {
  let memory = start;
  const fired: Array<Array<[string, number]>> = [];
  const alerts: BudgetAlert[][] = [];
  for (const { snap, at } of steps) {
    const r = budgetAlerts(memory, snap, at);
    memory = r.memory;
    alerts.push(r.alerts);
    fired.push(r.alerts.map((a) => [a.key, a.threshold]));
  }
  return { fired, alerts, memory };
}

const day1 = new Date(2025, 5, 1, 10, 0, 0).getTime();
const day1late = new Date(2025, 5, 1, 23, 59, 59).getTime();
const day2 = new Date(2025, 5, 2, 0, 0, 1).getTime();

describe('budget alerts', () => {
  it('crossing 50, then 80, then 100 fires each once', () => {
    const spends = [0.1, 0.4, 0.5, 0.6, 0.79, 0.8, 0.85, 0.99, 1.0, 1.2, 1.5];
    const { fired, alerts } = run(spends.map((s) => ({ snap: snapshot(key('ci', s, 1)), at: day1 })));
    expect(fired).toEqual([[], [], [['ci', 50]], [], [], [['ci', 80]], [], [], [['ci', 100]], [], []]);
    const [at50, at80, at100] = [alerts[2][0], alerts[5][0], alerts[8][0]];
    expect(at50).toMatchObject({ key: 'ci', threshold: 50, percent: 50, spentUsd: 0.5, budgetUsd: 1, period: 'daily' });
    expect(at50.title).toBe('Budget 50% used: ci');
    expect(at80.body).toBe('Key "ci" has spent $0.80 of its $1.00 daily budget (80%).');
    expect(at100.title).toBe('Budget spent: ci');
    expect(at100.body).toContain('402');
    expect(at100.body).toContain('until tomorrow');
  });

  it('a new period re-arms every threshold', () => {
    const { fired } = run([
      { snap: snapshot(key('ci', 0.55, 1)), at: day1 },
      { snap: snapshot(key('ci', 1.0, 1)), at: day1 },
      // The snapshot asked for at 23:59:59 still counts yesterday: nothing new.
      { snap: snapshot(key('ci', 1.0, 1)), at: day1late },
      // A new day: the gateway's count starts again, and so do the thresholds.
      { snap: snapshot(key('ci', 0.0, 1)), at: day2 },
      { snap: snapshot(key('ci', 0.52, 1)), at: day2 },
      { snap: snapshot(key('ci', 0.81, 1)), at: day2 },
      { snap: snapshot(key('ci', 1.01, 1)), at: day2 },
    ]);
    expect(fired).toEqual([[['ci', 50]], [['ci', 100]], [], [], [['ci', 50]], [['ci', 80]], [['ci', 100]]]);
  });

  it('monthly budgets re-arm with the month, total budgets never by date', () => {
    const june = new Date(2025, 5, 30, 12).getTime();
    const july = new Date(2025, 6, 1, 12).getTime();
    const m = run([
      { snap: snapshot(key('m', 6, 10, 'monthly'), key('t', 6, 10, 'total')), at: june },
      { snap: snapshot(key('m', 6, 10, 'monthly'), key('t', 6, 10, 'total')), at: july },
    ]);
    expect(m.fired).toEqual([[['m', 50], ['t', 50]], [['m', 50]]]);
    expect(periodId('monthly', june)).toBe('2025-06');
    expect(periodId('daily', june)).toBe('2025-06-30');
    expect(periodId('total', june)).toBe('total');
  });

  it('a jump over several thresholds shows only the highest, and the lower ones do not follow', () => {
    const { fired } = run([
      { snap: snapshot(key('ci', 0.1, 1)), at: day1 },
      { snap: snapshot(key('ci', 0.9, 1)), at: day1 },
      { snap: snapshot(key('ci', 0.95, 1)), at: day1 },
      { snap: snapshot(key('ci', 1.0, 1)), at: day1 },
    ]);
    expect(fired).toEqual([[], [['ci', 80]], [], [['ci', 100]]]);
  });

  it('spend dipping and rising again in the same period does not repeat; a new budget amount re-arms', () => {
    const { fired } = run([
      { snap: snapshot(key('ci', 0.6, 1)), at: day1 },
      { snap: snapshot(key('ci', 0.4, 1)), at: day1 },
      { snap: snapshot(key('ci', 0.6, 1)), at: day1 },
      // The user raised the budget to $2: 30 %, then its own 50 %.
      { snap: snapshot(key('ci', 0.6, 2)), at: day1 },
      { snap: snapshot(key('ci', 1.0, 2)), at: day1 },
    ]);
    expect(fired).toEqual([[['ci', 50]], [], [], [], [['ci', 50]]]);
  });

  it('keys are independent; no budget, deleted or disabled keys announce nothing', () => {
    const { fired } = run([
      { snap: snapshot(key('a', 0.2, 1), key('b', 0.6, 1), key('free', 100, null), key('gone', 5, 1, 'daily', 'deleted'), key('off', 5, 1, 'daily', 'disabled')), at: day1 },
      { snap: snapshot(key('a', 0.85, 1), key('b', 0.7, 1), key('free', 200, null), key('off', 5, 1, 'daily', 'active')), at: day1 },
    ]);
    // "off", re-enabled, says it is past its budget then.
    expect(fired).toEqual([[['b', 50]], [['a', 80], ['off', 100]]]);
  });

  it('percentages are whole and floating-point safe (0.29 of 1 is 29%, 0.57 is 57%); a zero budget counts as spent', () => {
    expect([0.29, 0.57, 0.5, 0.8, 0.999].map((s) => percentUsed(s, 1))).toEqual([29, 57, 50, 80, 99]);
    const r = budgetAlerts(null, snapshot(key('x', 0.5, 1), key('z', 0, 0)), day1);
    expect(r.alerts.map((a) => [a.key, a.threshold])).toEqual([['x', 50], ['z', 100]]);
    expect(budgetAlerts(null, snapshot(key('y', 0.499, 1)), day1).alerts).toEqual([]);
  });
});
