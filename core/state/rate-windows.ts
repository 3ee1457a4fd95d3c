/**
 * Per-key RPM and TPM windows as the gateway sees them, whatever keeps them: `RateLimiter` (memory,
 * one process, synchronous) or `RedisRateWindows` (one sliding window per key in Redis, shared by
 * every instance). Both count a request only when allowed and hold a TPM reservation until released.
 */
import type { Awaitable } from './awaitable.ts';

export interface RateLimits {
  rpm?: number | null;
  tpm?: number | null;
}

export interface RateDecision {
  allowed: boolean;
  /** The tokens held for this request until `release` (null when none were reserved). */
  reservation: TokenReservation | null;
  /** 0 when allowed; otherwise ms until this request would be allowed. */
  retryAfterMs: number;
  headers: Record<string, string>;
}

/** A token entry of a request in flight; `release` zeroes it. */
export interface TokenReservation {
  readonly keyId: string;
}

export interface RateWindows {
  /** Decides one request; when allowed it counts against RPM and, with a TPM limit, holds `reserveTokens`. */
  check(keyId: string, limits: RateLimits, reserveTokens?: number): Awaitable<RateDecision>;
  /** The same answer and headers as `check`, without counting a request. */
  peek(keyId: string, limits: RateLimits): Awaitable<RateDecision>;
  /** Drops a reservation (the call ended). Idempotent; fire and forget. */
  release(r: TokenReservation | null): void;
  /** Counts the tokens a finished call used. Fire and forget. */
  recordTokens(keyId: string, tokens: number): void;
}
