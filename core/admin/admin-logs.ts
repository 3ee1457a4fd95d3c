/**
 * Admin routes over the audit trail for the dashboard: server-side search (key, model, status, time
 * range, text), the same search as CSV, and spend per day stacked by model.
 */
import { roundUsdFields } from './money-json.ts';
import { badRequest } from '../errors.ts';
import { sendJson } from '../gateway/respond.ts';
import { callsToCsv, parseStatusFilter, searchCalls, spendByDayAndModel, unpricedByKey } from '../storage/log-search.ts';
import type { LogSearch } from '../storage/log-search.ts';
import type { AdminRoute } from './admin-route.ts';

function timeParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  const t = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(t)) throw badRequest(`${name} must be unix milliseconds or an ISO date`, 'invalid_value', name);
  return t;
}

/** The search a query string describes; shared by the JSON and CSV routes. */
export function searchFromQuery(query: URLSearchParams, defaultLimit: number): LogSearch {
  const s: LogSearch = { limit: Math.min(10_000, Number(query.get('limit')) || defaultLimit) };
  const key = query.get('key');
  if (key) s.key = key;
  const model = query.get('model');
  if (model) s.model = model;
  const status = query.get('status');
  if (status) {
    const parsed = parseStatusFilter(status);
    if (parsed === null) throw badRequest('status is a code (429), a class (5xx), ok or error', 'invalid_value', 'status');
    s.status = parsed;
  }
  s.since = timeParam(query, 'since');
  s.until = timeParam(query, 'until');
  s.before = timeParam(query, 'before');
  const q = query.get('q');
  if (q) s.text = q;
  return s;
}

export const adminLogRoutes: AdminRoute = async ({ res, method, path, query, headers, deps }) => {
  if (method !== 'GET') return false;
  if (path === '/admin/logs/search') {
    sendJson(res, 200, { calls: await deps.store.calls.searchCalls(searchFromQuery(query, 200)) }, headers);
    return true;
  }
  if (path === '/admin/logs.csv') {
    const csv = callsToCsv(await deps.store.calls.searchCalls(searchFromQuery(query, 10_000)));
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="gateway-calls-${new Date().toISOString().slice(0, 10)}.csv"`,
    });
    res.end(csv);
    return true;
  }
  if (path === '/admin/usage/stacked') {
    const since = timeParam(query, 'since');
    sendJson(res, 200, { rows: roundUsdFields(await deps.store.calls.spendByDayAndModel(since)), unpriced_by_key: await deps.store.calls.unpricedByKey(since) }, headers);
    return true;
  }
  return false;
};
