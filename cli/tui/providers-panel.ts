/** Provider health in plain words per provider, with when a failing one is tried again. */
import React from 'react';
import { Box, Text } from 'ink';
import type { ProviderSummary } from './admin-client.ts';
import { fit, healthColour, healthWords, money } from './format.ts';

const h = React.createElement;

export interface ProvidersPanelProps {
  providers: ProviderSummary[] | null;
  maxRows: number;
  /** Epoch ms, for "next probe in 12s". */
  now: number;
}

export function providersRows(providers: ProviderSummary[] | null, maxRows: number): number {
  return Math.max(1, Math.min(providers?.length ?? 0, maxRows));
}

export function providerLine(p: ProviderSummary, now: number): React.ReactElement {
  const colour = healthColour(p.health);
  const dot = p.health === 'closed' ? '●' : p.health === 'half-open' ? '◐' : '○';
  const spend = `${money(p.spent_today_usd)} today`;
  const words = healthWords(p.health, p.next_probe_at, now);
  // When a provider is out, when it comes back matters more than what it spent: that goes first.
  if (p.health === 'open') {
    return h(Text, { key: p.name, wrap: 'truncate-end' }, h(Text, { color: colour }, `${dot} `), fit(p.name, 14), ' ', h(Text, { color: colour }, words), ` · ${p.consecutive_failures} failures · ${spend}`);
  }
  const head = [h(Text, { key: 'dot', color: colour }, `${dot} `), fit(p.name, 14), ' ', h(Text, { key: 'health', color: colour }, fit(words, 12)), ' '];
  if (p.health !== 'closed') return h(Text, { key: p.name, wrap: 'truncate-end' }, ...head, spend);
  const models = `${p.preset ?? p.type}, ${p.models.length} model${p.models.length === 1 ? '' : 's'}`;
  return h(Text, { key: p.name, wrap: 'truncate-end' }, ...head, spend, h(Text, { dimColor: true }, ` · ${models}`));
}

export function ProvidersPanel(p: ProvidersPanelProps): React.ReactElement {
  const title = h(Text, { key: 'title', wrap: 'truncate-end' }, h(Text, { bold: true }, 'Providers'), h(Text, { dimColor: true }, '  health'));
  let lines: React.ReactElement[];
  if (p.providers === null) lines = [h(Text, { key: 'loading', dimColor: true }, 'loading…')];
  else if (p.providers.length === 0) lines = [h(Text, { key: 'none', dimColor: true, wrap: 'truncate-end' }, 'no providers yet: gateway providers add NAME --type openai --key-env OPENAI_API_KEY')];
  else if (p.providers.length <= p.maxRows) lines = p.providers.map((x) => providerLine(x, p.now));
  else {
    // Unhealthy providers first: they are what the user needs to see when space is short.
    const rank = (x: ProviderSummary) => (x.health === 'closed' ? 1 : 0);
    const sorted = [...p.providers].sort((a, b) => rank(a) - rank(b));
    const shown = Math.max(0, p.maxRows - 1);
    lines = [...sorted.slice(0, shown).map((x) => providerLine(x, p.now)), h(Text, { key: 'more', dimColor: true }, `+${sorted.length - shown} more (gateway providers list)`)];
  }
  return h(Box, { flexDirection: 'column' }, title, ...lines);
}
