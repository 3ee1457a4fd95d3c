/**
 * `/admin/snapshot`, polled by the terminal UI every 2 s and by the tray: spend today and this month,
 * per-key budgets, provider health and the latest calls. Every sum reads the running totals
 * (`spend_daily`, kept by the audit writer's trigger), never the month's calls, so a poll costs the same
 * at 1M rows as at 0 (a few small index reads), with nothing left heavy enough to need another thread.
 */
import { callToJson } from '../call-json.ts';
import { listCalls, spendSinceBy, spendTotalsFromDaily } from '../storage/audit-queries.ts';
import { periodStart } from '../gateway/budget.ts';
import type { GatewayDeps } from '../gateway/deps.ts';

/** The newest calls a snapshot may list. */
export const MAX_RECENT = 200;

const dayStart = (): number => periodStart('daily');
const monthStart = (): number => periodStart('monthly');

export function keySummaries(deps: GatewayDeps) {
  const { db } = deps.store;
  const since = { daily: dayStart(), monthly: monthStart(), total: Number.MIN_SAFE_INTEGER };
  const spent = {
    daily: spendSinceBy(db, 'key', since.daily),
    monthly: spendSinceBy(db, 'key', since.monthly),
    total: spendSinceBy(db, 'key', since.total),
  };
  return deps.store.keys.list().map((k) => {
    const period = k.budgetPeriod ?? 'total';
    const s = (k.budgetUsd !== null ? spent[period] : spent.daily).get(k.id) ?? 0;
    return {
      name: k.name,
      prefix: k.prefix,
      state: k.state,
      budget_usd: k.budgetUsd,
      budget_period: k.budgetUsd !== null ? period : null,
      spent_usd: s,
      spent_period: k.budgetUsd !== null ? period : 'daily',
      remaining_usd: k.budgetUsd !== null ? Math.max(0, k.budgetUsd - s) : null,
      rpm: k.rpm,
      tpm: k.tpm,
      models: k.models,
    };
  });
}

export function providerSummaries(deps: GatewayDeps) {
  const today = spendSinceBy(deps.store.db, 'provider', dayStart());
  const month = spendSinceBy(deps.store.db, 'provider', monthStart());
  return deps.live.providers.map((p) => {
    const b = deps.breaker.snapshotOf(p.settings.name);
    return {
      name: p.settings.name,
      type: p.settings.type,
      preset: p.settings.preset,
      base_url: p.settings.type === 'demo' ? 'local' : p.settings.baseUrl,
      priority: p.settings.priority,
      models: [...p.models],
      key_source: p.settings.keySource,
      key_env: p.settings.keyEnv,
      spent_today_usd: today.get(p.settings.name) ?? 0,
      spent_month_usd: month.get(p.settings.name) ?? 0,
      health: b ? b.state : 'closed',
      consecutive_failures: b?.consecutiveFailures ?? 0,
      next_probe_at: b?.nextProbeAt ?? null,
    };
  });
}

export type Snapshot = ReturnType<typeof buildSnapshot>;

function buildSnapshot(deps: GatewayDeps, recent: number) {
  const totals = spendTotalsFromDaily(deps.store.db, { todayStartMs: dayStart(), monthStartMs: monthStart() });
  return {
    spend: { today_usd: totals.todayUsd, month_usd: totals.monthUsd },
    keys: keySummaries(deps),
    providers: providerSummaries(deps),
    recent: listCalls(deps.store.db, { limit: recent }).map(callToJson),
    price_version: deps.prices.dataVersion(),
  };
}

/** The snapshot for a `recent` query parameter (default 50, at most MAX_RECENT). */
export function snapshot(deps: GatewayDeps, recentParam: string | null): Snapshot {
  const recent = Math.min(MAX_RECENT, Math.max(1, Math.trunc(Number(recentParam ?? 50)) || 50));
  return buildSnapshot(deps, recent);
}
