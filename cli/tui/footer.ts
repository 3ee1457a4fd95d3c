/** Bottom lines: what is wrong (if anything) and which keys do what. */
import React from 'react';
import { Box, Text } from 'ink';
import type { FeedState } from './feed.ts';
import { clock } from './format.ts';

const h = React.createElement;

export interface FooterProps {
  state: FeedState;
  /** In `gateway start` quitting the dashboard stops the gateway; in `gateway top` it only detaches. */
  quitStopsGateway: boolean;
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
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { wrap: 'truncate-end', color: st.error ? 'red' : undefined, dimColor: !st.error }, st.text),
    h(
      Text,
      { wrap: 'truncate-end' },
      h(Text, { inverse: true }, ' q '),
      h(Text, { dimColor: true }, p.quitStopsGateway ? ' quit and stop the gateway   ' : ' quit (the gateway keeps running)   '),
      h(Text, { inverse: true }, ' Ctrl-C '),
      h(Text, { dimColor: true }, ' same'),
    ),
  );
}
