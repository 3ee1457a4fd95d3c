/**
 * Per local key RPM / TPM limits over a SLIDING 60 s window (an exact log of the window's requests and
 * token records, so a key never gets more than its limit in any 60 s span, unlike a fixed window that
 * allows twice the limit across a boundary). Pure: no I/O, time from the injectable clock.
 *
 * - `check` decides one new request. A request counts (against RPM) only when allowed.
 * - Tokens are reserved at admission, the way OpenAI's own limiter counts a request (prompt estimate
 *   plus `max_tokens` times `n`): `check(..., reserveTokens)` admits a request only when the window's
 *   tokens plus its reservation fit the limit (a reservation larger than the whole limit is cut to it,
 *   so such a call runs alone in an otherwise empty window). After the call, `recordTokens` counts what
 *   it really used and `release` drops the reservation, so concurrent calls cannot overshoot together.
 * - A limit that is null/undefined is no limit; a limit <= 0 refuses everything (retry after 60 s).
 * - `retryAfterMs` (when refused) is the time until the request WOULD be allowed: the moment enough
 *   requests/tokens leave the window.
 * - Headers, only for the limits the key has: `x-ratelimit-limit-requests`,
 *   `x-ratelimit-remaining-requests` (after counting this request), `x-ratelimit-reset-requests`, and
 *   the same three `-tokens` ones. A reset is OpenAI's "time until the limit is back to its initial
 *   state", i.e. until the newest counted entry leaves the window ("0s" when the window is empty), as a
 *   Go duration string (`formatDuration`).
 */
import { systemClock, type Clock } from './clock.ts';
import type { RateDecision, RateLimits, RateWindows, TokenReservation } from '../state/rate-windows.ts';

export type { RateDecision, RateLimits, TokenReservation } from '../state/rate-windows.ts';

export interface RateLimiterOptions {
  clock?: Clock;
  /** Window length. Default 60 000 ms. */
  windowMs?: number;
}

interface TokenEntry extends TokenReservation {
  t: number;
  n: number;
}

interface KeyWindow {
  /** Timestamps of counted requests, ascending. */
  requests: number[];
  /** Token records, ascending by time. */
  tokens: TokenEntry[];
  tokenSum: number;
}

export class RateLimiter implements RateWindows {
  readonly windowMs: number;
  readonly #clock: Clock;
  readonly #keys = new Map<string, KeyWindow>();
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(opts: RateLimiterOptions = {}) {
    this.#clock = opts.clock ?? systemClock;
    this.windowMs = opts.windowMs ?? 60_000;
  }

  /** Decides one request; when allowed it counts against RPM and, with a TPM limit, holds `reserveTokens`. */
  check(keyId: string, limits: RateLimits, reserveTokens = 0): RateDecision {
    return this.#decide(keyId, limits, true, reserveTokens);
  }

  /** The same answer and headers as `check`, without counting a request (for calls that are not model calls). */
  peek(keyId: string, limits: RateLimits): RateDecision {
    return this.#decide(keyId, limits, false, 0);
  }

  /** Drops a reservation (the call ended; `recordTokens` counts what it really used). Idempotent. */
  release(r: TokenReservation | null): void {
    if (r === null) return;
    const e = r as TokenEntry;
    if (e.n === 0) return;
    // An entry still counts (n > 0) only while its window holds it: pruning and reset zero it.
    const w = this.#keys.get(e.keyId);
    if (w !== undefined) w.tokenSum = Math.max(0, w.tokenSum - e.n);
    e.n = 0;
  }

  #decide(keyId: string, limits: RateLimits, consume: boolean, reserveTokens: number): RateDecision {
    const now = this.#clock.now();
    this.#sweep(now);
    const rpm = limits.rpm ?? null;
    const tpm = limits.tpm ?? null;
    if (rpm === null && tpm === null) return { allowed: true, retryAfterMs: 0, headers: {}, reservation: null };
    const reserve = tpm !== null && tpm > 0 && Number.isFinite(reserveTokens) && reserveTokens > 0 ? Math.min(Math.ceil(reserveTokens), tpm) : 0;

    const w = this.#window(keyId, now);
    let wait = 0;
    if (rpm !== null && w.requests.length >= rpm) {
      // Allowed once the count drops to rpm - 1: when the entry at index length - rpm expires.
      wait = Math.max(wait, rpm <= 0 ? this.windowMs : w.requests[w.requests.length - rpm] + this.windowMs - now);
    }
    if (tpm !== null && (w.tokenSum >= tpm || w.tokenSum + reserve > tpm)) wait = Math.max(wait, this.#tokenWait(w, tpm - reserve, reserve === 0, now));
    const allowed = wait === 0;
    if (consume && allowed && rpm !== null) w.requests.push(now);
    let reservation: TokenEntry | null = null;
    if (consume && allowed && reserve > 0) {
      reservation = { keyId, t: now, n: reserve };
      w.tokens.push(reservation);
      w.tokenSum += reserve;
    }

    const headers: Record<string, string> = {};
    if (rpm !== null) {
      headers['x-ratelimit-limit-requests'] = String(rpm);
      headers['x-ratelimit-remaining-requests'] = String(Math.max(0, rpm - w.requests.length));
      headers['x-ratelimit-reset-requests'] = formatDuration(this.#until(w.requests.at(-1), now));
    }
    if (tpm !== null) {
      headers['x-ratelimit-limit-tokens'] = String(tpm);
      headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, tpm - w.tokenSum));
      headers['x-ratelimit-reset-tokens'] = formatDuration(this.#until(w.tokens.at(-1)?.t, now));
    }
    if (w.requests.length === 0 && w.tokens.length === 0) this.#keys.delete(keyId);
    return { allowed, retryAfterMs: Math.ceil(wait), headers, reservation };
  }

  /** Count the tokens a finished call used (prompt + completion). Ignores non-positive values. */
  recordTokens(keyId: string, tokens: number): void {
    if (!Number.isFinite(tokens) || tokens <= 0) return;
    const now = this.#clock.now();
    const w = this.#window(keyId, now);
    w.tokens.push({ keyId, t: now, n: Math.min(tokens, 1e9) });
    w.tokenSum += Math.min(tokens, 1e9);
  }

  /** Forget a key's window (deleted or rotated key), or every key's. */
  reset(keyId?: string): void {
    for (const [id, w] of this.#keys) {
      if (keyId !== undefined && id !== keyId) continue;
      for (const rec of w.tokens) rec.n = 0;
      this.#keys.delete(id);
    }
  }

  /** The window of a key, pruned to `now`. */
  #window(keyId: string, now: number): KeyWindow {
    let w = this.#keys.get(keyId);
    if (w === undefined) {
      w = { requests: [], tokens: [], tokenSum: 0 };
      this.#keys.set(keyId, w);
      return w;
    }
    this.#prune(w, now);
    return w;
  }

  #prune(w: KeyWindow, now: number): void {
    const cutoff = now - this.windowMs;
    let i = 0;
    while (i < w.requests.length && w.requests[i] <= cutoff) i++;
    if (i > 0) w.requests.splice(0, i);
    let j = 0;
    while (j < w.tokens.length && w.tokens[j].t <= cutoff) {
      const rec = w.tokens[j++];
      w.tokenSum -= rec.n;
      rec.n = 0;
    }
    if (j > 0) w.tokens.splice(0, j);
    if (w.tokens.length === 0) w.tokenSum = 0; // no float drift once empty
  }

  /**
   * Ms until enough token records leave the window for the sum to drop to `room` (below it when no
   * reservation is asked). Reservations of calls in flight usually leave earlier, when they settle.
   */
  #tokenWait(w: KeyWindow, room: number, strict: boolean, now: number): number {
    if (room < 0 || (strict && room === 0)) return this.windowMs;
    let sum = w.tokenSum;
    for (const rec of w.tokens) {
      sum -= rec.n;
      if (strict ? sum < room : sum <= room) return Math.max(1, rec.t + this.windowMs - now);
    }
    return this.windowMs; // unreachable: the sum reaches 0 < tpm
  }

  #until(t: number | undefined, now: number): number {
    return t === undefined ? 0 : Math.max(0, Math.ceil(t + this.windowMs - now));
  }

  /** Drop idle keys at most once a window, so memory follows active keys only. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < this.windowMs) return;
    this.#lastSweep = now;
    for (const [keyId, w] of this.#keys) {
      this.#prune(w, now);
      if (w.requests.length === 0 && w.tokens.length === 0) this.#keys.delete(keyId);
    }
  }
}

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/**
 * A duration in ms as Go's `time.Duration.String` prints it: "0s", "12ms", "1.5s", "6m0s", "1h0m0s",
 * "500µs", "100ns", "-1.5s". Sub-nanosecond parts are rounded to the nearest nanosecond.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`formatDuration: not a finite duration: ${ms}`);
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  const whole = Math.trunc(abs);
  let u = BigInt(whole) * NS_PER_MS + BigInt(Math.round((abs - whole) * 1e6));
  if (u === 0n) return '0s';
  if (u < 1000n) return `${sign}${u}ns`;
  if (u < NS_PER_MS) return `${sign}${u / 1000n}${fraction(u, 1000n)}µs`;
  if (u < NS_PER_S) return `${sign}${u / NS_PER_MS}${fraction(u, NS_PER_MS)}ms`;
  // Seconds with their fraction, then whole minutes and hours only when there are any (Go: "6m0s").
  let out = `${(u / NS_PER_S) % 60n}${fraction(u, NS_PER_S)}s`;
  u /= NS_PER_S * 60n;
  if (u > 0n) {
    out = `${u % 60n}m${out}`;
    u /= 60n;
    if (u > 0n) out = `${u}h${out}`;
  }
  return sign + out;
}

/** The part of `v` below `scale` as decimal digits without trailing zeros: ".5", ".001", or "". */
function fraction(v: bigint, scale: bigint): string {
  const width = scale.toString().length - 1;
  const digits = (v % scale).toString().padStart(width, '0').replace(/0+$/, '');
  return digits === '' ? '' : `.${digits}`;
}
