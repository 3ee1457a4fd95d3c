/**
 * Candidate ordering. Pure: returns a new array, claims nothing.
 *
 * - priority: ascending `priority`, then ascending `seq` (the order providers were added).
 * - cheapest: ascending price; an unknown price (null, or not a finite number >= 0) goes after every
 *   known one; ties (and the unknown group) by priority, then seq.
 * - fastest: ascending time-to-first-token estimate. An unknown latency is ranked as if it equalled the
 *   MEDIAN of the known estimates among these candidates, BEFORE a known one of equal value: a new
 *   provider goes after the known-fast ones but before the known-slow ones, and with one measured rival
 *   it is tried next, so it gets measured instead of never being chosen. With no estimates at all this is
 *   the priority order. Ties by priority, then seq.
 *
 * Health always counts: a candidate whose breaker would refuse an attempt now (`isAvailable` false:
 * open, or half-open with its probe already out) moves to the END, keeping the strategy's order among
 * those moved. Nothing is removed: when every breaker is open, everything is still tried, in order.
 * Ordering uses `isAvailable`, never `canAttempt`, so it does not consume a half-open probe slot; the
 * router calls `canAttempt` just before each attempt it actually makes.
 */
import type { CircuitBreaker } from './circuit-breaker.ts';

export const STRATEGIES = ['priority', 'cheapest', 'fastest'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export interface Candidate {
  provider: string;
  priority: number;
  seq: number;
  model: string;
}

export interface OrderDeps<T extends Candidate> {
  /** USD per 1M blended tokens (or any consistent unit); null when unknown. */
  priceOf(c: T): number | null;
  /** Time-to-first-token estimate in ms; undefined when unknown. */
  latencyOf(c: T): number | undefined;
  breaker: Pick<CircuitBreaker, 'isAvailable'>;
}

export function orderCandidates<T extends Candidate>(cands: readonly T[], strategy: Strategy, deps: OrderDeps<T>): T[] {
  const ranked = rank(cands, strategy, deps);
  const available: T[] = [];
  const held: T[] = [];
  for (const c of ranked) (deps.breaker.isAvailable(c.provider) ? available : held).push(c);
  return available.concat(held);
}

const byPriority = (a: Candidate, b: Candidate): number => a.priority - b.priority || a.seq - b.seq;

function rank<T extends Candidate>(cands: readonly T[], strategy: Strategy, deps: OrderDeps<T>): T[] {
  switch (strategy) {
    case 'priority':
      return [...cands].sort(byPriority);
    case 'cheapest':
      return sortByKey(cands, (c) => known(deps.priceOf(c)));
    case 'fastest': {
      const latencies = new Map<T, number | undefined>(cands.map((c) => [c, known(deps.latencyOf(c))]));
      const fill = median([...latencies.values()].filter((v): v is number => v !== undefined));
      return sortByKey(cands, (c) => latencies.get(c), fill);
    }
  }
}

/**
 * Ascending by key; an undefined key sorts as `fill` (after known keys of the same value), or after
 * everything when there is no fill. Ties by priority, then seq.
 */
function sortByKey<T extends Candidate>(cands: readonly T[], keyOf: (c: T) => number | undefined, fill?: number): T[] {
  const rows = cands.map((c) => {
    const k = keyOf(c);
    return { c, key: k ?? fill ?? Number.POSITIVE_INFINITY, unknown: k === undefined };
  });
  rows.sort((a, b) => a.key - b.key || Number(b.unknown) - Number(a.unknown) || byPriority(a.c, b.c));
  return rows.map((r) => r.c);
}

function known(v: number | null | undefined): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
