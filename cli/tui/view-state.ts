/**
 * What the user is looking at in the terminal dashboard, and how each key press changes it. Pure (no
 * React, no I/O), so every key binding is testable without a terminal:
 *   1-4 or Tab / Shift-Tab  views: calls, keys, providers, usage
 *   ↑ ↓ (or k j)            move the selection;   Enter  open the selected call's detail;   Esc  close it
 *   /                       type a filter (Enter keeps it, Esc clears it);   p  pause or resume the live list
 *   q, Ctrl-C               quit
 */
export const VIEWS = ['calls', 'keys', 'providers', 'usage'] as const;
export type View = (typeof VIEWS)[number];

export const VIEW_TITLES: Record<View, string> = { calls: 'Calls', keys: 'Keys', providers: 'Providers', usage: 'Usage' };

export interface ViewState {
  view: View;
  /** The filter text; empty shows everything. */
  filter: string;
  /** Whether keys are going into the filter (after `/`). */
  editingFilter: boolean;
  paused: boolean;
  /** Index into the current view's (filtered) list. */
  selected: number;
  /** Calls view: the detail pane of the selected call is open. */
  detail: boolean;
}

export const INITIAL_VIEW_STATE: ViewState = { view: 'calls', filter: '', editingFilter: false, paused: false, selected: 0, detail: false };

/** The keys Ink reports that matter here. */
export interface KeyPress {
  upArrow?: boolean;
  downArrow?: boolean;
  return?: boolean;
  escape?: boolean;
  tab?: boolean;
  shift?: boolean;
  backspace?: boolean;
  delete?: boolean;
  ctrl?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
}

export type Action = { type: 'state'; state: ViewState } | { type: 'quit' };

const switchTo = (s: ViewState, view: View): ViewState => ({ ...s, view, selected: 0, detail: false });

/** The next state for one key press; `listLength` is how many rows the current view shows. */
export function onKey(s: ViewState, input: string, key: KeyPress, listLength: number): Action {
  if (key.ctrl && input === 'c') return { type: 'quit' };
  const clamp = (i: number) => Math.max(0, Math.min(Math.max(0, listLength - 1), i));
  if (s.editingFilter) {
    if (key.escape) return { type: 'state', state: { ...s, editingFilter: false, filter: '', selected: 0 } };
    if (key.return) return { type: 'state', state: { ...s, editingFilter: false } };
    if (key.backspace || key.delete) return { type: 'state', state: { ...s, filter: s.filter.slice(0, -1), selected: 0 } };
    if (key.upArrow || key.downArrow || key.tab) return { type: 'state', state: s };
    if (input && !key.ctrl) return { type: 'state', state: { ...s, filter: s.filter + input, selected: 0 } };
    return { type: 'state', state: s };
  }
  if (input === 'q' || input === 'Q') return { type: 'quit' };
  if (key.tab) {
    const i = VIEWS.indexOf(s.view);
    return { type: 'state', state: switchTo(s, VIEWS[(i + (key.shift ? VIEWS.length - 1 : 1)) % VIEWS.length]) };
  }
  const n = Number(input);
  if (input.length === 1 && n >= 1 && n <= VIEWS.length) return { type: 'state', state: switchTo(s, VIEWS[n - 1]) };
  if (input === '/') return { type: 'state', state: { ...s, editingFilter: true, detail: false } };
  if (input === 'p' || input === 'P') return { type: 'state', state: { ...s, paused: !s.paused } };
  if (key.upArrow || input === 'k') return { type: 'state', state: { ...s, selected: clamp(s.selected - 1) } };
  if (key.downArrow || input === 'j') return { type: 'state', state: { ...s, selected: clamp(s.selected + 1) } };
  if (key.pageUp) return { type: 'state', state: { ...s, selected: clamp(s.selected - 10) } };
  if (key.pageDown) return { type: 'state', state: { ...s, selected: clamp(s.selected + 10) } };
  if (key.return && s.view === 'calls' && listLength > 0) return { type: 'state', state: { ...s, detail: true } };
  if (key.escape) {
    if (s.detail) return { type: 'state', state: { ...s, detail: false } };
    if (s.filter) return { type: 'state', state: { ...s, filter: '', selected: 0 } };
  }
  return { type: 'state', state: s };
}

/** Case-insensitive match of the filter against any of the given fields. */
export function matches(filter: string, fields: ReadonlyArray<string | number | null | undefined>): boolean {
  const f = filter.trim().toLowerCase();
  if (f === '') return true;
  return fields.some((v) => v !== null && v !== undefined && String(v).toLowerCase().includes(f));
}
