/**
 * The Ink dashboard. Written with `React.createElement` (no JSX) because Node runs these sources by
 * stripping types, which cannot transform JSX. Only `run-dashboard.ts` imports this module, lazily, so
 * commands that print data never load React or Ink.
 *
 * Layout, top to bottom: header (base URL, how to get a key, spend today and this month), keys (spend
 * vs budget) beside providers (health), the live request list filling the rest of the terminal, and a
 * footer (status line, keys).
 */
import React from 'react';
import { Box, render, useApp, useInput, useStdin, useWindowSize } from 'ink';
import type { Instance, RenderOptions } from 'ink';
import { CallsPanel } from './calls-panel.ts';
import { DashboardFeed } from './feed.ts';
import type { FeedState } from './feed.ts';
import { Footer } from './footer.ts';
import { Header } from './header.ts';
import { KeysPanel, keysRows } from './keys-panel.ts';
import { ProvidersPanel, providersRows } from './providers-panel.ts';
import type { DashboardOptions } from './run-dashboard.ts';

const h = React.createElement;

export interface DashboardViewProps {
  state: FeedState;
  baseUrl: string;
  createdKey?: { name: string; secret: string } | null;
  columns: number;
  rows: number;
  /** Epoch ms the view is drawn at (for "next probe in …"). */
  now: number;
  quitStopsGateway: boolean;
}

const HEADER = 3;
const CALLS_HEAD = 2; // title + column header
const FOOTER = 2;
const SIDE_BY_SIDE_MIN_COLUMNS = 110;
const COMPACT_BELOW_ROWS = 18;

/** How many request rows fit, given what the rest of the screen takes. Exported for tests. */
export function layout(p: Pick<DashboardViewProps, 'state' | 'columns' | 'rows'>): { sideBySide: boolean; showPanels: boolean; panelRows: number; callRows: number } {
  const sideBySide = p.columns >= SIDE_BY_SIDE_MIN_COLUMNS;
  // A very short terminal keeps the header, the requests and the footer; keys and providers go.
  if (p.rows < COMPACT_BELOW_ROWS) return { sideBySide, showPanels: false, panelRows: 0, callRows: Math.max(1, p.rows - (HEADER + 1 + CALLS_HEAD + FOOTER)) };
  // Keys and providers never take more than about a third of the screen: the requests are the point.
  const panelRows = Math.max(2, Math.min(8, Math.floor((p.rows - 12) / (sideBySide ? 3 : 5))));
  const k = keysRows(p.state.snapshot?.keys ?? null, panelRows);
  const v = providersRows(p.state.snapshot?.providers ?? null, panelRows);
  const panels = sideBySide ? 1 + Math.max(k, v) : 1 + k + 1 + 1 + v; // titles, and a blank line between when stacked
  const used = HEADER + 1 + panels + 1 + CALLS_HEAD + FOOTER; // + the blank lines around the panels
  return { sideBySide, showPanels: true, panelRows, callRows: Math.max(1, p.rows - used) };
}

/** The whole screen for one state: pure, so tests can render it with `renderToString`. */
export function DashboardView(p: DashboardViewProps): React.ReactElement {
  const { sideBySide, showPanels, panelRows, callRows } = layout(p);
  const snap = p.state.snapshot;
  const panelWidth = sideBySide ? Math.floor((p.columns - 2) / 2) : p.columns;
  const keys = h(KeysPanel, { keys: snap?.keys ?? null, maxRows: panelRows, barWidth: Math.max(8, Math.min(20, panelWidth - 48)) });
  const providers = h(ProvidersPanel, { providers: snap?.providers ?? null, maxRows: panelRows, now: p.now });
  let panels: React.ReactElement | null = null;
  if (showPanels && sideBySide) {
    panels = h(
      Box,
      { flexDirection: 'row', marginTop: 1, columnGap: 2, flexShrink: 0 },
      h(Box, { flexGrow: 1, flexBasis: 0, flexDirection: 'column' }, keys),
      h(Box, { flexGrow: 1, flexBasis: 0, flexDirection: 'column' }, providers),
    );
  } else if (showPanels) {
    panels = h(Box, { flexDirection: 'column', marginTop: 1, rowGap: 1, flexShrink: 0 }, keys, providers);
  }
  return h(
    Box,
    { flexDirection: 'column', width: p.columns, height: p.rows, overflow: 'hidden' },
    h(Box, { flexShrink: 0 }, h(Header, { baseUrl: p.baseUrl, createdKey: p.createdKey, live: p.state.live, spend: snap?.spend ?? null, priceVersion: snap?.price_version ?? null })),
    panels,
    h(Box, { flexDirection: 'column', marginTop: 1, flexGrow: 1, overflow: 'hidden' }, h(CallsPanel, { calls: p.state.calls, rows: callRows, columns: p.columns })),
    h(Box, { flexShrink: 0 }, h(Footer, { state: p.state, quitStopsGateway: p.quitStopsGateway })),
  );
}

export interface DashboardProps extends DashboardOptions {
  feed: DashboardFeed;
  quitStopsGateway: boolean;
}

/** The live dashboard: follows the feed, redraws on resize, quits on `q` or Ctrl-C. */
export function Dashboard(p: DashboardProps): React.ReactElement {
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const { columns, rows } = useWindowSize();
  React.useEffect(() => {
    p.feed.start();
    return () => p.feed.stop();
  }, [p.feed]);
  const state = React.useSyncExternalStore(p.feed.subscribe, p.feed.getState);
  useInput(
    (input, key) => {
      if (input === 'q' || input === 'Q' || (key.ctrl && input === 'c')) exit();
    },
    { isActive: isRawModeSupported },
  );
  return h(DashboardView, { state, baseUrl: p.baseUrl, createdKey: p.createdKey, columns, rows, now: Date.now(), quitStopsGateway: p.quitStopsGateway });
}

export interface MountOptions extends DashboardOptions {
  /** The user quit (q or Ctrl-C). Not called when `stop()` ended the dashboard. */
  onQuit?: () => void;
  /** The dashboard itself failed; the gateway must carry on without it. */
  onCrash?: (err: Error) => void;
  /** Overrides for Ink (tests pass their own streams). */
  ink?: RenderOptions;
  /** Snapshot re-fetch interval; default 2 s. */
  refreshMs?: number;
}

export interface MountedDashboard {
  instance: Instance;
  feed: DashboardFeed;
  /** Closes the dashboard (and its connections) without calling `onQuit`. */
  stop(): void;
}

export function mountDashboard(opts: MountOptions): MountedDashboard {
  const feed = new DashboardFeed({ adminUrl: opts.adminUrl, adminToken: opts.adminToken, refreshMs: opts.refreshMs });
  const instance = render(h(Dashboard, { ...opts, feed, quitStopsGateway: opts.quitStopsGateway === true }), {
    exitOnCtrlC: false, // handled in useInput, so quitting always goes through onQuit
    alternateScreen: true, // the terminal's own content (and the start-up notes) come back on quit
    ...opts.ink,
  });
  let stopped = false;
  instance.waitUntilExit().then(
    () => {
      feed.stop();
      if (!stopped) opts.onQuit?.();
    },
    (err: unknown) => {
      feed.stop();
      if (!stopped) opts.onCrash?.(err instanceof Error ? err : new Error(String(err)));
    },
  );
  return {
    instance,
    feed,
    stop() {
      if (stopped) return;
      stopped = true;
      feed.stop();
      instance.unmount();
    },
  };
}
