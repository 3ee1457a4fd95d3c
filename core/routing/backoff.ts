/**
 * Attempt planning and the wait before each attempt. Pure: no I/O, no timers; the caller sleeps.
 *
 * The rule (`planAttempts`):
 * 1. First pass: every candidate once, in the order given (the strategy's order), while attempts remain
 *    (`maxAttempts`, default 3, counts every attempt of the request, first passes and retries alike).
 *    A first attempt never waits: failing over to another provider is immediate (delay 0).
 * 2. Retry passes: while attempts remain, candidates are retried in the same order, each at most
 *    `sameProviderRetries` times (default 1), and only if its OWN latest failure allowed it
 *    (`retrySame`, see failure-policy.ts) and its backoff is not `null` (its retry-after is not longer
 *    than `maxMs`). A retry waits `backoffDelayMs(retryIndex, its retry-after)` even when another
 *    provider was tried in between (simple, and never earlier than the provider asked).
 * 3. The plan ends when no candidate qualifies or attempts run out. The router stops earlier on success
 *    or on a failure that does not fail over (a client error).
 *
 * So one candidate with the defaults gives A, A(retry); two give A, B, then A again if A's failure was
 * retryable, else B again if B's was; four give A, B, C (no retries: attempts ran out).
 */

export interface BackoffOptions {
  /** First retry's base delay. Default 100 ms. */
  baseMs?: number;
  /** Cap for the computed delay, and the longest retry-after we are willing to wait. Default 2000 ms. */
  maxMs?: number;
  /** Returns a number in [0, 1); the delay is reduced by up to 25 % of it. Default Math.random. */
  jitter?: () => number;
  /**
   * Whether the next attempt goes to the same provider as a previous one. Default true (this function
   * is mostly about same-provider retries); false always yields 0, because failover is immediate.
   */
  sameProvider?: boolean;
}

/**
 * How long to wait before the next attempt, in ms, or `null` for "do not retry this provider now"
 * (it asked for longer than `maxMs`).
 *
 * `retryIndex` is 0 for the first retry of a provider, 1 for the second, ...
 * - Different provider: 0.
 * - retry-after given (>= 0, finite): exactly that when <= maxMs, otherwise null.
 * - Otherwise: min(baseMs * 2^retryIndex, maxMs) * (1 - 0.25 * jitter()), the SDKs' own formula.
 */
export function backoffDelayMs(retryIndex: number, retryAfterMs?: number, opts: BackoffOptions = {}): number | null {
  if (opts.sameProvider === false) return 0;
  const baseMs = opts.baseMs ?? 100;
  const maxMs = opts.maxMs ?? 2000;
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return retryAfterMs <= maxMs ? retryAfterMs : null;
  }
  const n = Math.max(0, Math.floor(retryIndex));
  const raw = Math.min(baseMs * 2 ** n, maxMs);
  const j = clamp01((opts.jitter ?? Math.random)());
  return raw * (1 - 0.25 * j);
}

export interface PlanOptions {
  /** Total attempts for the request, first passes and retries together. Default 3. */
  maxAttempts?: number;
  /** Retries per provider after its first attempt. Default 1. */
  sameProviderRetries?: number;
  backoff?: Omit<BackoffOptions, 'sameProvider'>;
}

export interface PlannedAttempt {
  provider: string;
  /** 0-based index of this attempt within the request. */
  attempt: number;
  /** 0 for a provider's first attempt, 1 for its first retry, ... */
  retry: number;
  /** Wait this long before sending. */
  delayMs: number;
}

/** How the attempt that `next()` last returned failed. */
export interface AttemptOutcome {
  retrySame: boolean;
  retryAfterMs?: number;
}

export interface AttemptPlan {
  /** The next attempt to make, or null when the plan is over. */
  next(): PlannedAttempt | null;
  /**
   * Report the failure of the attempt `next()` just returned. An attempt that is not reported before
   * the following `next()` counts as a failure that does not allow a retry.
   */
  failed(outcome: AttemptOutcome): void;
  /** Attempts handed out so far. */
  readonly attempts: number;
}

interface CandidateState {
  provider: string;
  tries: number;
  retrySame: boolean;
  retryAfterMs: number | undefined;
}

export function planAttempts(candidates: readonly string[], opts: PlanOptions = {}): AttemptPlan {
  return new Planner(candidates, opts);
}

/**
 * A class, not an object literal with a getter and closures: V8 gives each such literal a hidden class
 * of its own (its accessor lives in the map), and those maps, allocated in the old generation, kept each
 * call's plan alive into the next young collection.
 */
class Planner implements AttemptPlan {
  readonly #opts: PlanOptions;
  readonly #maxAttempts: number;
  readonly #retries: number;
  readonly #states: CandidateState[];
  #attempts = 0;
  #firstPass = 0;
  /** Position in the retry pass. */
  #cursor = 0;
  #last: CandidateState | null = null;

  constructor(candidates: readonly string[], opts: PlanOptions) {
    this.#opts = opts;
    this.#maxAttempts = Math.max(1, Math.floor(opts.maxAttempts ?? 3));
    this.#retries = Math.max(0, Math.floor(opts.sameProviderRetries ?? 1));
    this.#states = candidates.map((provider) => ({ provider, tries: 0, retrySame: false, retryAfterMs: undefined }));
  }

  get attempts(): number {
    return this.#attempts;
  }

  next(): PlannedAttempt | null {
    this.#last = null;
    if (this.#attempts >= this.#maxAttempts) return null;
    if (this.#firstPass < this.#states.length) return this.#hand(this.#states[this.#firstPass++], 0);
    return this.#pickRetry();
  }

  failed(outcome: AttemptOutcome): void {
    const last = this.#last;
    if (last === null) return;
    last.retrySame = outcome.retrySame;
    last.retryAfterMs = outcome.retryAfterMs;
  }

  #pickRetry(): PlannedAttempt | null {
    const states = this.#states;
    // Walk the candidates round-robin from the cursor; stop after a full lap with nothing eligible.
    for (let seen = 0; seen < states.length; seen++) {
      const s = states[(this.#cursor + seen) % states.length];
      if (!s.retrySame || s.tries > this.#retries) continue;
      const delay = backoffDelayMs(s.tries - 1, s.retryAfterMs, this.#opts.backoff);
      if (delay === null) continue;
      this.#cursor = (this.#cursor + seen + 1) % states.length;
      return this.#hand(s, delay);
    }
    return null;
  }

  #hand(s: CandidateState, delayMs: number): PlannedAttempt {
    const planned = { provider: s.provider, attempt: this.#attempts, retry: s.tries, delayMs };
    s.tries += 1;
    s.retrySame = false; // until the attempt's failure says otherwise
    s.retryAfterMs = undefined;
    this.#attempts += 1;
    this.#last = s;
    return planned;
  }
}

function clamp01(x: number): number {
  if (!Number.isFinite(x) || x < 0) return 0;
  return x >= 1 ? 1 : x;
}
