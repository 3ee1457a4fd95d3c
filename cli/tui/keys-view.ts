/** The Keys view: every live key, closest to its budget first, with its limits and allowed models. */
import React from 'react';
import { Box, Text } from 'ink';
import type { KeySummary } from './admin-client.ts';
import { byBudgetUse, fit } from './format.ts';
import { keyLine } from './keys-panel.ts';
import { matches } from './view-state.ts';

const h = React.createElement;

export function visibleKeys(keys: KeySummary[] | null, filter: string): KeySummary[] {
  return byBudgetUse((keys ?? []).filter((k) => k.state !== 'deleted' && matches(filter, [k.name, k.state, k.prefix])));
}

export function KeysView(p: { keys: KeySummary[] | null; filter: string; selected: number; rows: number; columns: number }): React.ReactElement {
  const keys = visibleKeys(p.keys, p.filter);
  const barWidth = Math.max(8, Math.min(20, p.columns - 60));
  const title = h(Text, { key: 'title', wrap: 'truncate-end' }, h(Text, { bold: true }, 'Keys'), h(Text, { dimColor: true }, `  closest to budget first · ${keys.length} shown${p.filter ? ` · filter "${p.filter}"` : ''}`));
  const body: React.ReactElement[] = [];
  if (p.keys === null) body.push(h(Text, { key: 'loading', dimColor: true }, 'loading…'));
  else if (keys.length === 0) body.push(h(Text, { key: 'none', dimColor: true }, p.filter ? 'no key matches' : 'no keys yet: gateway keys create --name NAME'));
  const sel = Math.min(p.selected, Math.max(0, keys.length - 1));
  const perKey = 2;
  const fitting = Math.max(1, Math.floor((p.rows - 1) / perKey));
  const first = sel >= fitting ? sel - fitting + 1 : 0;
  keys.slice(first, first + fitting).forEach((k, i) => {
    const selected = first + i === sel;
    const limits = [k.rpm ? `${k.rpm} rpm` : null, k.tpm ? `${k.tpm} tpm` : null].filter(Boolean).join(', ') || 'no rate limits';
    body.push(h(Box, { key: k.name, flexDirection: 'row' }, h(Text, { inverse: selected }, selected ? '›' : ' '), keyLine(k, barWidth)));
    body.push(h(Text, { key: `${k.name}-limits`, dimColor: true, wrap: 'truncate-end' }, `  ${fit(k.prefix + '…', 14)} ${limits} · models: ${k.models && k.models.length > 0 ? k.models.join(', ') : 'any'}`));
  });
  return h(Box, { flexDirection: 'column' }, title, ...body);
}
