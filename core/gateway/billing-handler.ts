/**
 * Balance endpoints for chat UIs and relays that expect them (protocol.md §9): the key's budget and
 * spend in the OpenAI legacy dashboard shapes (`total_usage` in cents), a new-api style `/balance`
 * and a SiliconFlow style `/dashboard/user/info`. A key without a budget reports itself unlimited.
 */
import { badRequest } from '../errors.ts';
import { periodStart } from './budget.ts';
import { roundUsd, stringifyMoney } from '../pricing/cost.ts';
import type { RequestContext } from './request-context.ts';

const UNLIMITED_USD = 100_000_000;
/** Amounts use the one rounding rule (1e-10 USD) and print as plain decimals, like every other cost. */
const round = (n: number): number => roundUsd(n);

function sendJson(res: RequestContext['res'], status: number, body: unknown, headers: Record<string, string>): void {
  const text = stringifyMoney(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function keyBudget(ctx: RequestContext): Promise<{ budget: number | null; spent: number }> {
  const key = ctx.key;
  await ctx.deps.store.drainAudit();
  const since = periodStart(key.budgetPeriod ?? 'total');
  const spent = await ctx.deps.store.calls.spendForKeyBetween(key.id, since, Date.now() + 1);
  return { budget: key.budgetUsd ?? null, spent };
}

const headers = (ctx: RequestContext) => ({ 'x-request-id': ctx.requestId, ...ctx.baseHeaders });

export async function handleBalance(ctx: RequestContext): Promise<void> {
  const { budget, spent } = await keyBudget(ctx);
  sendJson(ctx.res, 200, {
    object: 'balance',
    success: true,
    currency: 'USD',
    key: ctx.key.name,
    period: ctx.key.budgetPeriod ?? (budget === null ? null : 'total'),
    budget_usd: budget,
    used: round(spent),
    remain: budget === null ? null : round(Math.max(0, budget - spent)),
    unlimited_quota: budget === null,
  }, headers(ctx));
}

export async function handleUserInfo(ctx: RequestContext): Promise<void> {
  const { budget, spent } = await keyBudget(ctx);
  const remain = budget === null ? UNLIMITED_USD : Math.max(0, budget - spent);
  sendJson(ctx.res, 200, {
    code: 20000,
    message: 'OK',
    status: true,
    data: { id: ctx.key.id, name: ctx.key.name, balance: remain.toFixed(2), chargeBalance: '0.00', totalBalance: remain.toFixed(2), status: 'normal' },
  }, headers(ctx));
}

export async function handleSubscription(ctx: RequestContext): Promise<void> {
  const { budget } = await keyBudget(ctx);
  const limit = budget ?? UNLIMITED_USD;
  sendJson(ctx.res, 200, {
    object: 'billing_subscription',
    has_payment_method: true,
    soft_limit_usd: limit,
    hard_limit_usd: limit,
    system_hard_limit_usd: limit,
    access_until: 0,
  }, headers(ctx));
}

function parseDay(v: string | null, param: string): number | null {
  if (v === null || v === '') return null;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) throw badRequest(`Invalid '${param}': expected YYYY-MM-DD.`, 'invalid_value', param);
  const [y, m, d] = v.split('-').map(Number);
  return new Date(y, m - 1, d).getTime();
}

/**
 * `total_usage` is in cents. Chat UIs compute the balance as `hard_limit_usd - total_usage / 100`,
 * asking for `start_date=<first of the month>&end_date=<today>`; so that they show the same remainder
 * as `/v1/balance`, a key with a budget reports what it spent in its own budget period (the dates can
 * only narrow the end), and `end_date` counts the whole day it names (today's spend included).
 * Without a budget the dates are honoured as given: start inclusive, end through that day.
 */
export async function handleBillingUsage(ctx: RequestContext, query: URLSearchParams): Promise<void> {
  const start = parseDay(query.get('start_date'), 'start_date');
  const end = parseDay(query.get('end_date'), 'end_date');
  await ctx.deps.store.drainAudit();
  const budgeted = ctx.key.budgetUsd !== null && ctx.key.budgetUsd !== undefined;
  const periodFrom = periodStart(ctx.key.budgetPeriod ?? 'total');
  const from = budgeted ? periodFrom : (start ?? periodFrom);
  const endOfDay = end === null ? null : new Date(new Date(end).setDate(new Date(end).getDate() + 1)).getTime();
  const to = budgeted ? Date.now() + 1 : (endOfDay ?? Date.now() + 1);
  const spent = await ctx.deps.store.calls.spendForKeyBetween(ctx.key.id, from, to);
  sendJson(ctx.res, 200, { object: 'list', total_usage: roundUsd(spent * 100) }, headers(ctx));
}
