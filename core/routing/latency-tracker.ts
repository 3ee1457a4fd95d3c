/**
 * Time to first token per provider and model, as an exponentially weighted moving average:
 * `estimate = alpha * sample + (1 - alpha) * estimate`; the first sample is taken as is.
 * Pure bookkeeping: the router measures, this only remembers. Memory is one number per
 * provider+model pair that has ever answered.
 */

export interface LatencyTrackerOptions {
  /** Weight of the newest sample, in (0, 1]. Default 0.3. */
  alpha?: number;
}

export interface LatencySnapshot {
  provider: string;
  model: string;
  ttftMs: number;
  samples: number;
}

interface Entry {
  provider: string;
  model: string;
  ewma: number;
  samples: number;
}

export class LatencyTracker {
  readonly alpha: number;
  readonly #entries = new Map<string, Entry>();

  constructor(opts: LatencyTrackerOptions = {}) {
    const a = opts.alpha ?? 0.3;
    if (!(a > 0 && a <= 1)) throw new RangeError(`alpha must be in (0, 1], got ${a}`);
    this.alpha = a;
  }

  /** Record one time-to-first-token sample. Negative or non-finite samples are ignored. */
  record(provider: string, model: string, ttftMs: number): void {
    if (!Number.isFinite(ttftMs) || ttftMs < 0) return;
    const key = keyOf(provider, model);
    const e = this.#entries.get(key);
    if (e === undefined) {
      this.#entries.set(key, { provider, model, ewma: ttftMs, samples: 1 });
      return;
    }
    e.ewma = this.alpha * ttftMs + (1 - this.alpha) * e.ewma;
    e.samples += 1;
  }

  /** The current estimate in ms, or undefined when nothing was recorded yet. */
  estimate(provider: string, model: string): number | undefined {
    return this.#entries.get(keyOf(provider, model))?.ewma;
  }

  snapshot(): LatencySnapshot[] {
    return [...this.#entries.values()].map((e) => ({
      provider: e.provider,
      model: e.model,
      ttftMs: e.ewma,
      samples: e.samples,
    }));
  }

  /** Forget one provider (all its models), or everything. */
  reset(provider?: string): void {
    if (provider === undefined) {
      this.#entries.clear();
      return;
    }
    for (const [key, e] of this.#entries) if (e.provider === provider) this.#entries.delete(key);
  }
}

// NUL cannot appear in a provider name or a model id, so the pair maps to one key unambiguously.
const keyOf = (provider: string, model: string): string => `${provider}\u0000${model}`;
