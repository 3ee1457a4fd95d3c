/** The detail pane of one call in the terminal dashboard: everything the audit row says, and its attempts. */
import React from 'react';
import { Box, Text } from 'ink';
import type { CallJson } from '../../core/call-json.ts';
import type { CallAttemptJson } from './admin-client.ts';
import { costText } from './calls-panel.ts';
import { count, latency, statusColour } from './format.ts';

const h = React.createElement;

export interface CallDetailProps {
  call: CallJson;
  /** null while loading. */
  attempts: CallAttemptJson[] | null;
  rows: number;
}

const localTime = (iso: string) => new Date(iso).toLocaleString();

function pricingWords(c: CallJson): string {
  const cost = costText(c);
  if (cost === '-') return 'not billed (refused before any provider, or none answered)';
  if (cost === 'unpriced') return 'unpriced: no price known for this model';
  return `${cost} (${c.pricing}${c.price_version ? `, prices ${c.price_version}` : ''})`;
}

export function CallDetail(p: CallDetailProps): React.ReactElement {
  const c = p.call;
  const field = (label: string, value: React.ReactNode) => h(Text, { key: label, wrap: 'truncate-end' }, h(Text, { dimColor: true }, `${label.padEnd(9)} `), value);
  const lines: React.ReactElement[] = [
    h(Text, { key: 'title', wrap: 'truncate-end' }, h(Text, { bold: true }, 'Call '), c.id, h(Text, { dimColor: true }, '   Esc closes')),
    field('time', localTime(c.time)),
    field('key', `${c.key ?? '-'}   ${c.endpoint}${c.stream ? ' (stream)' : ''}`),
    field('model', `${c.model_requested ?? '-'}${c.provider ? ` → ${c.provider}/${c.model ?? '?'}` : ''}`),
    field('status', h(Text, { color: statusColour(c.status) }, `${c.status}${c.error_type ? ` ${c.error_type}` : ''}`)),
  ];
  if (c.error_message) lines.push(field('error', c.error_message.replace(/\s+/g, ' ')));
  lines.push(field('tokens', `${count(c.input_tokens)} in, ${count(c.output_tokens)} out${c.cached_tokens ? `, ${count(c.cached_tokens)} cached` : ''}${c.reasoning_tokens ? `, ${count(c.reasoning_tokens)} reasoning` : ''}`));
  lines.push(field('cost', pricingWords(c)));
  lines.push(field('latency', `${latency(c.latency_ms)}${c.ttft_ms !== null ? `, first token ${latency(c.ttft_ms)}` : ''}`));
  if (p.attempts === null) lines.push(field('attempts', `${c.attempts} (loading…)`));
  else if (p.attempts.length === 0) lines.push(field('attempts', 'none: the call reached no provider'));
  else {
    p.attempts.forEach((a, i) =>
      lines.push(field(i === 0 ? 'attempts' : '', `${i + 1}. ${a.provider}/${a.model} ${a.status ?? 'no answer'} ${latency(a.duration_ms)}${a.error ? ` ${a.error.replace(/\s+/g, ' ')}` : ''}`)),
    );
  }
  return h(Box, { flexDirection: 'column', borderStyle: 'single', borderTop: true, borderBottom: false, borderLeft: false, borderRight: false }, ...lines.slice(0, Math.max(1, p.rows - 1)));
}
