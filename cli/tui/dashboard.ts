/**
 * The Ink dashboard. Written with `React.createElement` (no JSX) because Node runs these sources by
 * stripping types, which cannot transform JSX. Only `run-dashboard.ts` imports this module, lazily, so
 * commands that print data never load React or Ink.
 *
 * Layout, top to bottom: header (base URL, how to get a key, spend today and this month), the view,
 * and a footer (status or filter line; the views and keys). Views (view-state.ts has the key bindings):
 * calls (keys beside providers, then the live request list, and a detail pane for the selected call),
 * keys, providers, usage by day and model.
 */
import React from 'react';
import { Box, render, useApp, useInput, useStdin, useWindowSize } from 'ink';
import type { Instance, RenderOptions } from 'ink';
import type { CallJson } from '../../core/call-json.ts';
import type { CallAttemptJson } from './admin-client.ts';
import { fetchCallAttempts } from './admin-client.ts';
import { CallDetail } from './call-detail.ts';
import { CallsPanel } from './calls-panel.ts';
import { DashboardFeed } from './feed.ts';
import type { FeedState } from './feed.ts';
import { Footer } from './footer.ts';
import { Header } from './header.ts';
import { KeysPanel, keysRows } from './keys-panel.ts';
import { KeysView, visibleKeys } from './keys-view.ts';
import { ProvidersPanel, providersRows } from './providers-panel.ts';
import { ProvidersView, visibleProviders } from './providers-view.ts';
import { UsageView, useUsage } from './usage-view.ts';
import type { UsageData } from './usage-view.ts';
import { INITIAL_VIEW_STATE, matches, onKey } from './view-state.ts';
import type { ViewState } from './view-state.ts';
import type { DashboardOptions } from './dashboard-options.ts';

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
  /** The view, selection, filter and pause; the calls view without a filter when absent. */
  ui?: ViewState;
  /** The calls to list (filtered, or frozen while paused); `state.calls` when absent. */
  calls?: CallJson[];
  usage?: { data: UsageData | null; error: string | null };
  /** The selected call's attempts, for the detail pane (null while loading). */
  attempts?: CallAttemptJson[] | null;
}

const DETAIL_ROWS = 12;

/** The calls a view shows: those matching the filter. */
export function filterCalls(calls: CallJson[], filter: string): CallJson[] {
  return filter.trim() === '' ? calls : calls.filter((c) => matches(filter, [c.key, c.model, c.model_requested, c.provider, c.status, c.error_type, c.endpoint, c.id]));
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
  const ui = p.ui ?? INITIAL_VIEW_STATE;
  const snap = p.state.snapshot;
  const header = h(Box, { flexShrink: 0 }, h(Header, { baseUrl: p.baseUrl, createdKey: p.createdKey, live: p.state.live, spend: snap?.spend ?? null, priceVersion: snap?.price_version ?? null }));
  const footer = h(Box, { flexShrink: 0 }, h(Footer, { state: p.state, quitStopsGateway: p.quitStopsGateway, ui }));
  const bodyRows = Math.max(1, p.rows - HEADER - FOOTER - 1);
  if (ui.view !== 'calls') {
    let body: React.ReactElement;
    if (ui.view === 'keys') body = h(KeysView, { keys: snap?.keys ?? null, filter: ui.filter, selected: ui.selected, rows: bodyRows, columns: p.columns });
    else if (ui.view === 'providers') body = h(ProvidersView, { providers: snap?.providers ?? null, filter: ui.filter, selected: ui.selected, rows: bodyRows, now: p.now });
    else body = h(UsageView, { data: p.usage?.data ?? null, error: p.usage?.error ?? null, filter: ui.filter, rows: bodyRows, columns: p.columns });
    return h(
      Box,
      { flexDirection: 'column', width: p.columns, height: p.rows, overflow: 'hidden' },
      header,
      h(Box, { flexDirection: 'column', marginTop: 1, flexGrow: 1, overflow: 'hidden' }, body),
      footer,
    );
  }
  const calls = p.calls ?? filterCalls(p.state.calls, ui.filter);
  const selectedCall = calls[Math.min(ui.selected, calls.length - 1)];
  const detail = ui.detail && selectedCall !== undefined;
  const l = layout(p);
  // The detail pane takes the place of the panels first, then of request rows.
  const showPanels = l.showPanels && !detail;
  const detailRows = detail ? Math.min(DETAIL_ROWS, Math.max(4, Math.floor(bodyRows / 2))) : 0;
  const callRows = detail ? Math.max(1, bodyRows - CALLS_HEAD - detailRows) : l.callRows;
  const { sideBySide, panelRows } = l;
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
    header,
    panels,
    h(Box, { flexDirection: 'column', marginTop: 1, flexGrow: 1, overflow: 'hidden' }, h(CallsPanel, { calls, rows: callRows, columns: p.columns, selected: ui.selected, note: [ui.paused ? 'paused' : null, ui.filter ? `filter "${ui.filter}"` : null].filter(Boolean).join(' · ') || undefined })),
    detail ? h(Box, { flexShrink: 0, height: detailRows, overflow: 'hidden' }, h(CallDetail, { call: selectedCall, attempts: p.attempts ?? null, rows: detailRows })) : null,
    footer,
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
  const [ui, setUi] = React.useState<ViewState>(INITIAL_VIEW_STATE);
  // Paused: the list stays as it was when `p` was pressed; the feed keeps running underneath.
  const [frozen, setFrozen] = React.useState<CallJson[] | null>(null);
  const liveCalls = frozen ?? state.calls;
  const calls = filterCalls(liveCalls, ui.filter);
  const endpoint = React.useMemo(() => ({ adminUrl: p.adminUrl, adminToken: p.adminToken }), [p.adminUrl, p.adminToken]);
  const usage = useUsage(endpoint, ui.view === 'usage');
  const listLength =
    ui.view === 'calls' ? calls.length : ui.view === 'keys' ? visibleKeys(state.snapshot?.keys ?? null, ui.filter).length : ui.view === 'providers' ? visibleProviders(state.snapshot?.providers ?? null, ui.filter).length : 0;
  const selectedId = ui.view === 'calls' && ui.detail ? calls[Math.min(ui.selected, calls.length - 1)]?.id : undefined;
  const attempts = useAttempts(selectedId, endpoint);
  useInput(
    (input, key) => {
      const action = onKey(ui, input, key, listLength);
      if (action.type === 'quit') return exit();
      if (action.state.paused !== ui.paused) setFrozen(action.state.paused ? state.calls : null);
      setUi(action.state);
    },
    { isActive: isRawModeSupported },
  );
  return h(DashboardView, { state, baseUrl: p.baseUrl, createdKey: p.createdKey, columns, rows, now: Date.now(), quitStopsGateway: p.quitStopsGateway, ui, calls, usage, attempts });
}

/** The attempts of the call whose detail is open, fetched once per call. */
function useAttempts(id: string | undefined, endpoint: { adminUrl: string; adminToken: string }): CallAttemptJson[] | null {
  const [got, setGot] = React.useState<{ id: string; attempts: CallAttemptJson[] } | null>(null);
  React.useEffect(() => {
    if (id === undefined) return undefined;
    const ac = new AbortController();
    fetchCallAttempts(endpoint, id, ac.signal).then(
      (attempts) => setGot({ id, attempts }),
      () => undefined,
    );
    return () => ac.abort();
  }, [id, endpoint]);
  return got && got.id === id ? got.attempts : null;
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
