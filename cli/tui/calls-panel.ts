/** The live list of requests, newest on top, as many as fit. */
import React from 'react';
import { Box, Text } from 'ink';
import type { CallJson } from '../../core/call-json.ts';
import { clock, count, fit, latency, money, statusColour } from './format.ts';

const h = React.createElement;

export interface CallsPanelProps {
  calls: CallJson[];
  /** Lines available for call rows (below the title and the column header). */
  rows: number;
  columns: number;
  /** Index of the selected call in `calls`, or null for none. */
  selected?: number | null;
  /** A note after the title (filter, paused). */
  note?: string;
}

/** Column widths; the route (model → provider/model) takes what is left. */
const W = { time: 8, status: 3, key: 12, tokens: 13, cost: 10, latency: 7, attempts: 3 };
const FIXED = 1 + W.time + W.status + W.key + W.tokens + W.cost + W.latency + W.attempts + 7; // a selection gutter, and one space between columns

/** "model → provider/model"; a failed call says why (the message is what `gateway logs show` has in full). */
export function routeText(c: CallJson): string {
  const requested = c.model_requested ?? c.endpoint;
  const route = c.provider ? `${requested} → ${c.provider}/${c.model ?? '?'}` : requested;
  if (c.status < 400) return route;
  const why = (c.error_message ?? c.error_type ?? 'error').replace(/\s+/g, ' ');
  return `${route} ✗ ${why}`;
}

/** Refused calls (no provider reached) cost nothing and are not "unpriced": they show a dash. */
export function costText(c: CallJson): string {
  if (c.cost_usd === null) return c.provider === null || c.status >= 400 ? '-' : 'unpriced';
  return `${money(c.cost_usd)}${c.pricing === 'estimated' ? '~' : ''}`;
}

function callLine(c: CallJson, routeWidth: number, selected: boolean): React.ReactElement {
  return h(
    Text,
    { key: c.id, wrap: 'truncate-end', inverse: selected },
    selected ? '›' : ' ',
    h(Text, { dimColor: !selected }, fit(clock(c.time), W.time)),
    ' ',
    h(Text, { color: statusColour(c.status), bold: true }, fit(String(c.status), W.status)),
    ' ',
    fit(c.key ?? '-', W.key),
    ' ',
    h(Text, { color: c.status >= 400 ? statusColour(c.status) : undefined }, fit(routeText(c), routeWidth)),
    ' ',
    fit(`${count(c.input_tokens)}→${count(c.output_tokens)}`, W.tokens, 'right'),
    ' ',
    fit(costText(c), W.cost, 'right'),
    ' ',
    fit(latency(c.latency_ms), W.latency, 'right'),
    ' ',
    h(Text, { color: c.attempts > 1 ? 'yellow' : undefined, dimColor: c.attempts <= 1 }, fit(`×${c.attempts}`, W.attempts, 'right')),
  );
}

export function CallsPanel(p: CallsPanelProps): React.ReactElement {
  const routeWidth = Math.max(12, p.columns - FIXED);
  const title = h(Text, { key: 'title', wrap: 'truncate-end' }, h(Text, { bold: true }, 'Requests'), h(Text, { dimColor: true }, `  newest first · ${p.calls.length} ${p.note ? `shown · ${p.note}` : 'kept'}`));
  const head = h(
    Text,
    { key: 'head', dimColor: true, wrap: 'truncate-end' },
    ' ' +
    [fit('TIME', W.time), fit('STS', W.status), fit('KEY', W.key), fit('MODEL → PROVIDER/MODEL', routeWidth), fit('TOKENS in→out', W.tokens, 'right'), fit('COST', W.cost, 'right'), fit('LATENCY', W.latency, 'right'), fit('TRY', W.attempts, 'right')].join(' '),
  );
  const rows = Math.max(0, p.rows);
  const sel = p.selected ?? null;
  // Keep the selection in view: the window scrolls once it passes the last visible row.
  const first = sel !== null && sel >= rows ? sel - rows + 1 : 0;
  const lines =
    p.calls.length === 0
      ? [h(Text, { key: 'none', dimColor: true, wrap: 'truncate-end' }, p.note ? 'no request matches' : 'no requests yet: point a tool at the base URL above')]
      : p.calls.slice(first, first + rows).map((c, i) => callLine(c, routeWidth, sel === first + i));
  return h(Box, { flexDirection: 'column' }, title, head, ...lines);
}
