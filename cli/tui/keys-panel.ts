/** Per-key spend against its budget, one bar per key. */
import React from 'react';
import { Box, Text } from 'ink';
import type { KeySummary } from './admin-client.ts';
import { bar, byBudgetUse, fit, money } from './format.ts';

const h = React.createElement;

export interface KeysPanelProps {
  keys: KeySummary[] | null;
  /** Rows available for keys (a "+N more" line counts as one). */
  maxRows: number;
  barWidth?: number;
}

/** How many lines the panel takes below its title for `keys`. */
export function keysRows(keys: KeySummary[] | null, maxRows: number): number {
  const n = keys ? keys.filter((k) => k.state !== 'deleted').length : 0;
  return Math.max(1, Math.min(n, maxRows));
}

export function keyLine(k: KeySummary, barWidth: number): React.ReactElement {
  const name = fit(k.name, 14);
  const state = k.state === 'active' ? '' : ` [${k.state}]`;
  if (k.budget_usd === null) {
    return h(Text, { key: k.name, wrap: 'truncate-end', dimColor: k.state !== 'active' }, `${name} `, h(Text, { dimColor: true }, fit('no budget', barWidth)), ` ${money(k.spent_usd)} today${state}`);
  }
  const used = k.budget_usd > 0 ? k.spent_usd / k.budget_usd : 1;
  const colour = used >= 1 ? 'red' : used >= 0.8 ? 'yellow' : 'green';
  return h(
    Text,
    { key: k.name, wrap: 'truncate-end', dimColor: k.state !== 'active' },
    `${name} `,
    h(Text, { color: colour }, bar(used, barWidth)),
    ` ${money(k.spent_usd)} / ${money(k.budget_usd)} ${k.budget_period ?? ''} `,
    h(Text, { color: colour }, `${Math.round(used * 100)}%`),
    state,
  );
}

export function KeysPanel(p: KeysPanelProps): React.ReactElement {
  const barWidth = p.barWidth ?? 16;
  const title = h(Text, { key: 'title', wrap: 'truncate-end' }, h(Text, { bold: true }, 'Keys'), h(Text, { dimColor: true }, '  spend vs budget'));
  let lines: React.ReactElement[];
  if (p.keys === null) lines = [h(Text, { key: 'loading', dimColor: true }, 'loading…')];
  else {
    // Closest to their budget first: on a small screen those are the ones that stay visible.
    const keys = byBudgetUse(p.keys.filter((k) => k.state !== 'deleted'));
    if (keys.length === 0) lines = [h(Text, { key: 'none', dimColor: true, wrap: 'truncate-end' }, 'no keys yet: gateway keys create --name NAME')];
    else if (keys.length <= p.maxRows) lines = keys.map((k) => keyLine(k, barWidth));
    else {
      const shown = Math.max(0, p.maxRows - 1);
      lines = [...keys.slice(0, shown).map((k) => keyLine(k, barWidth)), h(Text, { key: 'more', dimColor: true }, `+${keys.length - shown} more (gateway keys list)`)];
    }
  }
  return h(Box, { flexDirection: 'column' }, title, ...lines);
}
