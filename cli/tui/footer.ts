/** Bottom lines: what is wrong (if anything) and which keys do what. */
import React from 'react';
import { Box, Text } from 'ink';
import type { FeedState } from './feed.ts';
import { clock } from './format.ts';
import { VIEW_TITLES, VIEWS } from './view-state.ts';
import type { ViewState } from './view-state.ts';

const h = React.createElement;

export interface FooterProps {
  state: FeedState;
  /** In `gateway start` quitting the dashboard stops the gateway; in `gateway top` it only detaches. */
  quitStopsGateway: boolean;
  ui?: ViewState;
}

/** The status line: a failed fetch shows here, and the dashboard keeps retrying. */
export function statusText(s: FeedState): { text: string; error: boolean } {
  if (s.snapshotError) return { text: `⚠ cannot reach the admin API: ${s.snapshotError} (retrying every 2 s)`, error: true };
  if (s.eventsError) return { text: `⚠ live events interrupted: ${s.eventsError} (reconnecting; the list still refreshes every 2 s)`, error: true };
  if (s.updatedAt === null) return { text: 'connecting…', error: false };
  return { text: `updated ${clock(s.updatedAt)}`, error: false };
}

export function Footer(p: FooterProps): React.ReactElement {
  const st = statusText(p.state);
  const ui = p.ui;
  let first: React.ReactElement;
  if (ui?.editingFilter) first = h(Text, { wrap: 'truncate-end' }, h(Text, { bold: true }, 'filter: '), ui.filter, h(Text, { inverse: true }, ' '), h(Text, { dimColor: true }, '   Enter keeps it · Esc clears it'));
  else {
    const marks = [ui?.paused ? 'PAUSED (p resumes)' : null, ui?.filter ? `filter "${ui.filter}" (Esc clears)` : null].filter(Boolean).join(' · ');
    first = h(
      Text,
      { wrap: 'truncate-end', color: st.error ? 'red' : undefined },
      marks ? h(Text, { bold: true, color: 'yellow' }, `${marks}  `) : null,
      h(Text, { dimColor: !st.error }, st.text),
      st.error ? null : h(Text, { dimColor: true }, '   / filter · p pause · ↑↓ select · Enter detail'),
    );
  }
  const view = ui?.view ?? 'calls';
  return h(
    Box,
    { flexDirection: 'column' },
    first,
    h(
      Text,
      { wrap: 'truncate-end' },
      ...VIEWS.map((v, i) => (v === view ? h(Text, { key: v, inverse: true, bold: true }, `[${i + 1} ${VIEW_TITLES[v]}]`) : h(Text, { key: v, dimColor: true }, ` ${i + 1} ${VIEW_TITLES[v]} `))),
      ' ',
      h(Text, { inverse: true }, 'q'),
      h(Text, { dimColor: true }, p.quitStopsGateway ? ' quit and stop the gateway' : ' quit (the gateway keeps running)'),
    ),
  );
}
