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
  /**
   * Per provider, per model: both names come from the configuration, strings whose hash V8 keeps, where a key
   * joined from the two on every call had to be hashed and compared character by character (~0.3 µs a call).
   */
  readonly #entries = new Map<string, Map<string, Entry>>();

  constructor(opts: LatencyTrackerOptions = {}) {
    const a = opts.alpha ?? 0.3;
    if (!(a > 0 && a <= 1)) throw new RangeError(`alpha must be in (0, 1], got ${a}`);
    this.alpha = a;
  }

  /** Record one time-to-first-token sample. Negative or non-finite samples are ignored. */
  record(provider: string, model: string, ttftMs: number): void {
    if (!Number.isFinite(ttftMs) || ttftMs < 0) return;
    let models = this.#entries.get(provider);
    if (models === undefined) {
      models = new Map();
      this.#entries.set(provider, models);
    }
    const e = models.get(model);
    if (e === undefined) {
      models.set(model, { provider, model, ewma: ttftMs, samples: 1 });
      return;
    }
    e.ewma = this.alpha * ttftMs + (1 - this.alpha) * e.ewma;
    e.samples += 1;
  }

  /** The current estimate in ms, or undefined when nothing was recorded yet. */
  estimate(provider: string, model: string): number | undefined {
    return this.#entries.get(provider)?.get(model)?.ewma;
  }

  snapshot(): LatencySnapshot[] {
    return [...this.#entries.values()].flatMap((models) => [...models.values()]).map((e) => ({
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
    this.#entries.delete(provider);
  }
}
