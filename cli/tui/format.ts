/** Pure formatting for the dashboard: money, bars, times, colours. No React here, so tests need none. */
import { money, until } from '../../core/display-format.ts';

// Shared with the tray, which takes them from the core's public entry point.
export { money, until };

/** A fixed-width bar, `fraction` clamped to 0..1: `██████░░░░`. */
export function bar(fraction: number, width: number): string {
  const w = Math.max(1, Math.floor(width));
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  const full = Math.round(f * w);
  return '█'.repeat(full) + '░'.repeat(w - full);
}

/** Local wall-clock time `HH:MM:SS` of an ISO timestamp or epoch ms. */
export function clock(t: string | number): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return '--:--:--';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function latency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}s`;
}

/** Compact token counts: 950, 12.3k, 4.1M. */
export function count(n: number): string {
  if (!Number.isFinite(n)) return '-';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export type Colour = 'green' | 'yellow' | 'red' | 'gray' | 'cyan';

/** 2xx green, 4xx (the client's side, budgets, limits) yellow, 5xx and anything odd red. */
export function statusColour(status: number): Colour {
  if (status >= 200 && status < 300) return 'green';
  if (status >= 400 && status < 500) return 'yellow';
  return 'red';
}

export function healthColour(health: string): Colour {
  if (health === 'closed') return 'green';
  if (health === 'half-open') return 'yellow';
  return 'red';
}

/** Pads or cuts `s` to exactly `width` columns (cut with an ellipsis). Dashboard text is ASCII plus a few symbols. */
export function fit(s: string, width: number, align: 'left' | 'right' = 'left'): string {
  const w = Math.max(0, Math.floor(width));
  if (s.length > w) return w <= 1 ? s.slice(0, w) : `${s.slice(0, w - 1)}…`;
  return align === 'left' ? s.padEnd(w) : s.padStart(w);
}

/** A provider's health in plain words, never breaker jargon: "healthy", "failing, retry in 20s", "trying again". */
export function healthWords(health: string, nextProbeAt: number | null, nowMs: number): string {
  if (health === 'closed') return 'healthy';
  if (health === 'half-open' || health === 'half_open') return 'trying again';
  const when = until(nextProbeAt, nowMs);
  return when ? `failing, retry ${when === 'now' ? 'now' : when}` : 'failing';
}

/** How much of its budget a key has used (0..), or -1 without a budget: the order keys are shown in. */
export function budgetUse(k: { budget_usd: number | null; spent_usd: number }): number {
  if (k.budget_usd === null) return -1;
  return k.budget_usd > 0 ? k.spent_usd / k.budget_usd : Number.POSITIVE_INFINITY;
}

/** Keys closest to (or over) their budget first; keys without a budget after, by spend. */
export function byBudgetUse<K extends { name: string; budget_usd: number | null; spent_usd: number }>(keys: readonly K[]): K[] {
  return [...keys].sort((a, b) => budgetUse(b) - budgetUse(a) || b.spent_usd - a.spent_usd || a.name.localeCompare(b.name));
}
