/**
 * Per-provider circuit breaker. Pure policy: it does no I/O and reads time only from its clock.
 *
 * States (per provider):
 * - closed: attempts go through. `failureThreshold` consecutive counted failures open it.
 * - open: `canAttempt` is false until `nextProbeAt` (= opened at + current cooldown).
 * - half-open: the cooldown has passed. The next `canAttempt` claims the single probe slot and returns
 *   true; every later caller gets false until the probe reports. The probe's outcome decides:
 *   `onSuccess` closes the breaker and resets everything; `onFailure` re-opens it with the cooldown
 *   doubled (capped at `maxCooldownMs`; set it equal to `cooldownMs` for a fixed cooldown).
 *   A probe that never reports (the client vanished, the router forgot) cannot wedge the breaker:
 *   claiming the probe moves `nextProbeAt` one cooldown ahead, and once that passes another caller may
 *   claim a new probe.
 *
 * Reporting rules for the router:
 * - `onSuccess` for any response that proves the provider works (any success, from any attempt).
 * - `onFailure` only for failures that count against health (see failure-policy.ts).
 * - `onNeutral` for outcomes that say nothing about health (429, a client's own 4xx, a client abort):
 *   it frees a claimed probe slot and changes no counter.
 * - A counted failure while open (cooldown still running, no probe claimed) is a straggler that started
 *   before the breaker opened, or a forced attempt made because every candidate was open: it is
 *   counted but neither moves the probe time nor doubles the cooldown.
 *
 * `canAttempt` has a side effect (it may claim the probe slot). Ordering code must use `isAvailable`,
 * which answers the same question without claiming anything.
 */
import { systemClock, type Clock } from './clock.ts';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive counted failures that open a closed breaker. Default 3. */
  failureThreshold?: number;
  /** Cooldown after the breaker opens, before the first probe. Default 30 000 ms. */
  cooldownMs?: number;
  /** Each failed probe doubles the cooldown up to this cap. Default 300 000 ms (5 min). */
  maxCooldownMs?: number;
  clock?: Clock;
}

export interface BreakerSnapshot {
  provider: string;
  state: BreakerState;
  consecutiveFailures: number;
  /** When the breaker last opened (or re-opened after a failed probe); null when closed. */
  openedAt: number | null;
  /** When the next probe may go out; null when closed. */
  nextProbeAt: number | null;
  /** The cooldown currently in force (grows with failed probes). */
  cooldownMs: number;
  /** Whether a probe has been let through and has not reported yet. */
  probeInFlight: boolean;
}

interface Entry {
  failures: number;
  openedAt: number | null;
  nextProbeAt: number | null;
  cooldownMs: number;
  probeInFlight: boolean;
}

export class CircuitBreaker {
  readonly failureThreshold: number;
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();

  constructor(opts: CircuitBreakerOptions = {}) {
    this.failureThreshold = Math.max(1, Math.floor(opts.failureThreshold ?? 3));
    this.cooldownMs = Math.max(0, opts.cooldownMs ?? 30_000);
    this.maxCooldownMs = Math.max(this.cooldownMs, opts.maxCooldownMs ?? 300_000);
    this.#clock = opts.clock ?? systemClock;
  }

  /** Whether an attempt may go to `provider` now, WITHOUT claiming the half-open probe slot. */
  isAvailable(provider: string): boolean {
    const e = this.#entries.get(provider);
    if (e === undefined || e.openedAt === null) return true;
    return this.#clock.now() >= (e.nextProbeAt ?? 0);
  }

  /**
   * Whether an attempt may go to `provider` now. In half-open this claims the one probe slot: call it
   * right before actually sending the attempt, and report the outcome.
   */
  canAttempt(provider: string): boolean {
    const e = this.#entries.get(provider);
    if (e === undefined || e.openedAt === null) return true;
    const now = this.#clock.now();
    if (now < (e.nextProbeAt ?? 0)) return false;
    e.probeInFlight = true;
    // If this probe never reports, another one may go out after one more cooldown.
    e.nextProbeAt = now + e.cooldownMs;
    return true;
  }

  onSuccess(provider: string): void {
    // Closed with no failures is the default; dropping the entry keeps the map small.
    this.#entries.delete(provider);
  }

  onFailure(provider: string): void {
    const now = this.#clock.now();
    const e = this.#entries.get(provider) ?? this.#fresh();
    this.#entries.set(provider, e);
    e.failures += 1;
    if (e.openedAt === null) {
      if (e.failures >= this.failureThreshold) this.#open(e, now, this.cooldownMs);
      return;
    }
    const halfOpen = e.probeInFlight || now >= (e.nextProbeAt ?? 0);
    if (halfOpen) this.#open(e, now, Math.min(e.cooldownMs * 2, this.maxCooldownMs));
  }

  /** An outcome that says nothing about health: frees a claimed probe slot, counters unchanged. */
  onNeutral(provider: string): void {
    const e = this.#entries.get(provider);
    if (e === undefined || !e.probeInFlight) return;
    e.probeInFlight = false;
    // Let the next caller probe at once: the provider answered, it just was not a verdict.
    e.nextProbeAt = Math.min(e.nextProbeAt ?? 0, this.#clock.now());
  }

  state(provider: string): BreakerState {
    const e = this.#entries.get(provider);
    if (e === undefined || e.openedAt === null) return 'closed';
    if (e.probeInFlight || this.#clock.now() >= (e.nextProbeAt ?? 0)) return 'half-open';
    return 'open';
  }

  /** Every provider the breaker knows about (closed providers with no failures are omitted). */
  snapshot(): BreakerSnapshot[] {
    return [...this.#entries.keys()].sort().map((provider) => this.snapshotOf(provider));
  }

  snapshotOf(provider: string): BreakerSnapshot {
    const e = this.#entries.get(provider);
    return {
      provider,
      state: this.state(provider),
      consecutiveFailures: e?.failures ?? 0,
      openedAt: e?.openedAt ?? null,
      nextProbeAt: e?.nextProbeAt ?? null,
      cooldownMs: e?.cooldownMs ?? this.cooldownMs,
      probeInFlight: e?.probeInFlight ?? false,
    };
  }

  /** Forget a provider's history (removed provider, or a manual "test" that succeeded). */
  reset(provider?: string): void {
    if (provider === undefined) this.#entries.clear();
    else this.#entries.delete(provider);
  }

  #fresh(): Entry {
    return { failures: 0, openedAt: null, nextProbeAt: null, cooldownMs: this.cooldownMs, probeInFlight: false };
  }

  #open(e: Entry, now: number, cooldownMs: number): void {
    e.openedAt = now;
    e.cooldownMs = cooldownMs;
    e.nextProbeAt = now + cooldownMs;
    e.probeInFlight = false;
  }
}
