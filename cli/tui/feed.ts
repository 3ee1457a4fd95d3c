/**
 * The dashboard's data, without React: the admin snapshot (spend, keys, provider health), re-fetched
 * every 2 s, and the calls from the admin event stream as they happen. Every failure becomes a line
 * of status text and a retry; nothing here throws into the caller (the gateway may be our own process).
 */
import type { CallJson } from '../../core/call-json.ts';
import { fetchSnapshot } from './admin-client.ts';
import type { AdminEndpoint, AdminSnapshot } from './admin-client.ts';
import { followCalls } from './follow-calls.ts';

export interface FeedState {
  snapshot: AdminSnapshot | null;
  /** Newest first, at most `maxCalls`. */
  calls: CallJson[];
  /** Whether the event stream is open. */
  live: boolean;
  /** The last snapshot failure, cleared by the next success. */
  snapshotError: string | null;
  /** Why the event stream is down, cleared when it reconnects. */
  eventsError: string | null;
  /** When the last snapshot arrived (epoch ms). */
  updatedAt: number | null;
}

export interface FeedOptions extends AdminEndpoint {
  refreshMs?: number;
  maxCalls?: number;
}

const message = (err: unknown): string => {
  const e = err as { code?: string; message?: string } | null;
  const text = e?.message || e?.code || String(err);
  return text.replace(/\s+/g, ' ').trim();
};

/** Merges `incoming` into `calls` (dedup by id), newest first, bounded. */
export function mergeCalls(calls: readonly CallJson[], incoming: readonly CallJson[], max: number): CallJson[] {
  if (incoming.length === 0) return calls as CallJson[];
  const byId = new Map<string, CallJson>();
  for (const c of calls) byId.set(c.id, c);
  for (const c of incoming) byId.set(c.id, c);
  return [...byId.values()].sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0)).slice(0, max);
}

export class DashboardFeed {
  #state: FeedState = { snapshot: null, calls: [], live: false, snapshotError: null, eventsError: null, updatedAt: null };
  readonly #opts: FeedOptions;
  readonly #listeners = new Set<() => void>();
  #timer: NodeJS.Timeout | null = null;
  #retry: NodeJS.Timeout | null = null;
  #closeEvents: (() => void) | null = null;
  #inFlight: AbortController | null = null;
  #stopped = true;

  constructor(opts: FeedOptions) {
    this.#opts = opts;
  }

  get state(): FeedState {
    return this.#state;
  }

  /** For `useSyncExternalStore`: `fn` runs after every change. */
  subscribe = (fn: () => void): (() => void) => {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  };

  getState = (): FeedState => this.#state;

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    void this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.#opts.refreshMs ?? 2000);
    void this.#connect();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#retry) clearTimeout(this.#retry);
    this.#timer = this.#retry = null;
    this.#inFlight?.abort();
    this.#closeEvents?.();
    this.#closeEvents = null;
  }

  /** Fetches the snapshot once (skipped while one is in flight). */
  async refresh(): Promise<void> {
    if (this.#stopped || this.#inFlight) return;
    const ac = new AbortController();
    this.#inFlight = ac;
    try {
      const snap = await fetchSnapshot(this.#opts, ac.signal);
      if (this.#stopped) return;
      this.#set({ snapshot: snap, calls: mergeCalls(this.#state.calls, snap.recent, this.#max()), snapshotError: null, updatedAt: Date.now() });
    } catch (err) {
      if (!this.#stopped) this.#set({ snapshotError: message(err) });
    } finally {
      this.#inFlight = null;
    }
  }

  #max(): number {
    return this.#opts.maxCalls ?? 200;
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    try {
      const close = await followCalls(
        this.#opts,
        (c) => this.#set({ calls: mergeCalls(this.#state.calls, [c], this.#max()) }),
        (err) => this.#lost(err ? message(err) : 'the gateway closed the event stream'),
      );
      if (this.#stopped) return close();
      this.#closeEvents = close;
      this.#set({ live: true, eventsError: null });
    } catch (err) {
      this.#lost(message(err));
    }
  }

  #lost(reason: string): void {
    this.#closeEvents = null;
    if (this.#stopped) return;
    this.#set({ live: false, eventsError: reason });
    this.#retry = setTimeout(() => {
      this.#retry = null;
      void this.#connect();
    }, this.#opts.refreshMs ?? 2000);
  }

  #set(patch: Partial<FeedState>): void {
    this.#state = { ...this.#state, ...patch };
    for (const fn of this.#listeners) {
      try {
        fn();
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}
