/** The Usage view: spend by day (last 14 days, local time) and by model (this month), fetched while shown. */
import React from 'react';
import { Box, Text } from 'ink';
import type { AdminEndpoint, UsageRow } from './admin-client.ts';
import { fetchUsage } from './admin-client.ts';
import { bar, count, fit, money } from './format.ts';
import { matches } from './view-state.ts';

const h = React.createElement;

export interface UsageData {
  days: UsageRow[];
  models: UsageRow[];
}

/** Re-fetches every `everyMs` while `active` (the view is shown); errors become a line of text. */
export function useUsage(endpoint: AdminEndpoint, active: boolean, everyMs = 5_000): { data: UsageData | null; error: string | null } {
  const [data, setData] = React.useState<UsageData | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  React.useEffect(() => {
    if (!active) return undefined;
    const ac = new AbortController();
    const load = async () => {
      const now = new Date();
      const days = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 13).getTime();
      const month = new Date(now.getFullYear(), now.getMonth(), 1).getTime();
      try {
        const [d, m] = await Promise.all([fetchUsage(endpoint, 'day', days, ac.signal), fetchUsage(endpoint, 'model', month, ac.signal)]);
        setData({ days: d, models: m });
        setError(null);
      } catch (err) {
        if (!ac.signal.aborted) setError((err as Error).message);
      }
    };
    void load();
    const t = setInterval(() => void load(), everyMs);
    return () => {
      ac.abort();
      clearInterval(t);
    };
  }, [endpoint.adminUrl, endpoint.adminToken, everyMs, active]);
  return { data, error };
}

const costCell = (r: UsageRow) => (r.unpriced > 0 && r.cost_usd === 0 ? 'unpriced' : money(r.cost_usd));

export function UsageView(p: { data: UsageData | null; error: string | null; filter: string; rows: number; columns: number }): React.ReactElement {
  const title = h(Text, { key: 'title', wrap: 'truncate-end' }, h(Text, { bold: true }, 'Usage'), h(Text, { dimColor: true }, '  by day (14 days) and by model (this month)'));
  if (p.error) return h(Box, { flexDirection: 'column' }, title, h(Text, { color: 'red', wrap: 'truncate-end' }, `cannot load usage: ${p.error}`));
  if (!p.data) return h(Box, { flexDirection: 'column' }, title, h(Text, { dimColor: true }, 'loading…'));
  const half = Math.max(3, Math.floor((p.rows - 3) / 2));
  const max = Math.max(0, ...p.data.days.map((d) => d.cost_usd));
  const barW = Math.max(6, Math.min(30, p.columns - 50));
  const days = p.data.days.slice(-Math.max(1, half - 1));
  const dayLines = days.length === 0
    ? [h(Text, { key: 'none', dimColor: true }, 'no calls in the last 14 days')]
    : days.map((d) => h(Text, { key: d.group, wrap: 'truncate-end' }, `${d.group}  `, h(Text, { color: 'cyan' }, bar(max > 0 ? d.cost_usd / max : 0, barW)), ` ${fit(money(d.cost_usd), 10, 'right')}  ${fit(String(d.requests), 6, 'right')} calls`));
  const models = p.data.models.filter((m) => matches(p.filter, [m.group]));
  const modelLines = models.length === 0
    ? [h(Text, { key: 'none', dimColor: true }, p.filter ? 'no model matches' : 'no calls this month')]
    : models.slice(0, Math.max(1, p.rows - 4 - dayLines.length)).map((m) =>
        h(Text, { key: m.group, wrap: 'truncate-end' }, `${fit(m.group, 28)} ${fit(costCell(m), 10, 'right')} ${fit(String(m.requests), 6, 'right')} calls ${fit(`${count(m.input_tokens)}→${count(m.output_tokens)}`, 14, 'right')}${m.errors ? `  ${m.errors} errors` : ''}`),
      );
  return h(
    Box,
    { flexDirection: 'column' },
    title,
    h(Text, { dimColor: true }, `DAY         ${fit('SPEND', barW)} ${fit('', 10)}  `),
    ...dayLines,
    h(Text, { dimColor: true }, `${fit('MODEL', 28)} ${fit('COST', 10, 'right')} ${fit('CALLS', 12, 'right')} ${fit('TOKENS in→out', 14, 'right')}`),
    ...modelLines,
  );
}
