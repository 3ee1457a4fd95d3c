/** The Providers view: each provider's health in plain words, spend, and (selected) its models. */
import React from 'react';
import { Box, Text } from 'ink';
import type { ProviderSummary } from './admin-client.ts';
import { money } from './format.ts';
import { providerLine } from './providers-panel.ts';
import { matches } from './view-state.ts';

const h = React.createElement;

export function visibleProviders(providers: ProviderSummary[] | null, filter: string): ProviderSummary[] {
  return (providers ?? []).filter((p) => matches(filter, [p.name, p.type, p.preset, p.health, ...p.models]));
}

export function ProvidersView(p: { providers: ProviderSummary[] | null; filter: string; selected: number; rows: number; now: number }): React.ReactElement {
  const list = visibleProviders(p.providers, p.filter);
  const sel = Math.min(p.selected, Math.max(0, list.length - 1));
  const title = h(Text, { key: 'title', wrap: 'truncate-end' }, h(Text, { bold: true }, 'Providers'), h(Text, { dimColor: true }, `  health · routing order${p.filter ? ` · filter "${p.filter}"` : ''}`));
  const body: React.ReactElement[] = [];
  if (p.providers === null) body.push(h(Text, { key: 'loading', dimColor: true }, 'loading…'));
  else if (list.length === 0) body.push(h(Text, { key: 'none', dimColor: true, wrap: 'truncate-end' }, p.filter ? 'no provider matches' : 'no providers yet: gateway providers add NAME --type openai --key-env OPENAI_API_KEY'));
  list.forEach((x, i) => body.push(h(Box, { key: x.name, flexDirection: 'row' }, h(Text, { inverse: i === sel }, i === sel ? '›' : ' '), providerLine(x, p.now))));
  const chosen = list[sel];
  if (chosen) {
    const room = Math.max(0, p.rows - 1 - body.length - 3);
    body.push(h(Text, { key: 'sep', dimColor: true }, ' '));
    body.push(h(Text, { key: 'about', wrap: 'truncate-end' }, h(Text, { bold: true }, chosen.name), h(Text, { dimColor: true }, `  ${chosen.base_url ?? ''}  priority ${chosen.priority ?? '-'}  ${money(chosen.spent_month_usd)} this month`)));
    body.push(h(Text, { key: 'models', wrap: 'wrap', dimColor: true }, `models: ${chosen.models.slice(0, Math.max(3, room * 4)).join(', ')}${chosen.models.length > room * 4 && chosen.models.length > 3 ? ', …' : ''}`));
  }
  return h(Box, { flexDirection: 'column' }, title, ...body);
}
