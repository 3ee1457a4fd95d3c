/**
 * `/admin/snapshot`, polled by the terminal UI every 2 s and by the tray: spend today and this month,
 * per-key budgets, provider health and the latest calls. Every sum reads the running totals
 * (`spend_daily`, kept by the audit writer), never the month's calls, so a poll costs the same
 * at 1M rows as at 0 (a few small index reads), with nothing left heavy enough to need another thread.
 */
import { callToJson } from '../call-json.ts';
import { periodStart } from '../gateway/budget.ts';
import type { GatewayDeps } from '../gateway/deps.ts';
import { keySpendFigures, spendPeriod } from '../keys/key-spend.ts';
import { roundUsdFields } from './money-json.ts';

/** The newest calls a snapshot may list. */
export const MAX_RECENT = 200;

const dayStart = (): number => periodStart('daily');
const monthStart = (): number => periodStart('monthly');

export async function keySummaries(deps: GatewayDeps) {
  const { calls } = deps.store;
  const since = { daily: dayStart(), monthly: monthStart(), total: Number.MIN_SAFE_INTEGER };
  const spent = {
    daily: await calls.spendSinceBy('key', since.daily),
    monthly: await calls.spendSinceBy('key', since.monthly),
    total: await calls.spendSinceBy('key', since.total),
  };
  return (await deps.store.keys.list()).map((k) => {
    const figures = keySpendFigures(k, spent[spendPeriod(k)].get(k.id) ?? 0);
    return {
      name: k.name,
      prefix: k.prefix,
      state: k.state,
      budget_usd: k.budgetUsd,
      budget_period: k.budgetUsd !== null ? figures.spent_period : null,
      ...figures,
      rpm: k.rpm,
      tpm: k.tpm,
      models: k.models,
    };
  });
}

export async function providerSummaries(deps: GatewayDeps) {
  const today = await deps.store.calls.spendSinceBy('provider', dayStart());
  const month = await deps.store.calls.spendSinceBy('provider', monthStart());
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

export type Snapshot = Awaited<ReturnType<typeof buildSnapshot>>;

async function buildSnapshot(deps: GatewayDeps, recent: number) {
  const totals = await deps.store.calls.spendTotalsFromDaily({ todayStartMs: dayStart(), monthStartMs: monthStart() });
  return {
    spend: { today_usd: totals.todayUsd, month_usd: totals.monthUsd },
    keys: await keySummaries(deps),
    providers: await providerSummaries(deps),
    recent: (await deps.store.calls.listCalls({ limit: recent })).map(callToJson),
    price_version: deps.prices.dataVersion(),
  };
}

/** The snapshot for a `recent` query parameter (default 50, at most MAX_RECENT). */
export async function snapshot(deps: GatewayDeps, recentParam: string | null): Promise<Snapshot> {
  const recent = Math.min(MAX_RECENT, Math.max(1, Math.trunc(Number(recentParam ?? 50)) || 50));
  return roundUsdFields(await buildSnapshot(deps, recent));
}
