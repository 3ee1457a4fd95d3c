import { describe, expect, it } from 'vitest';
import { backoffDelayMs, planAttempts, type AttemptOutcome, type PlannedAttempt, type PlanOptions } from '../../core/routing/backoff.ts';

const noJitter = { jitter: () => 0 };

describe('backoffDelayMs', () => {
  it('is 0 when moving to a different provider', () => {
    expect(backoffDelayMs(0, undefined, { sameProvider: false })).toBe(0);
    expect(backoffDelayMs(3, 1500, { sameProvider: false })).toBe(0);
    expect(backoffDelayMs(0, 60_000, { sameProvider: false })).toBe(0);
  });

  it('grows exponentially from baseMs and is capped at maxMs', () => {
    expect(backoffDelayMs(0, undefined, noJitter)).toBe(100);
    expect(backoffDelayMs(1, undefined, noJitter)).toBe(200);
    expect(backoffDelayMs(2, undefined, noJitter)).toBe(400);
    expect(backoffDelayMs(4, undefined, noJitter)).toBe(1600);
    expect(backoffDelayMs(5, undefined, noJitter)).toBe(2000);
    expect(backoffDelayMs(50, undefined, noJitter)).toBe(2000);
    expect(backoffDelayMs(1, undefined, { baseMs: 50, maxMs: 75, ...noJitter })).toBe(75);
  });

  it('jitter takes off up to 25 %', () => {
    expect(backoffDelayMs(0, undefined, { jitter: () => 0.5 })).toBe(87.5);
    expect(backoffDelayMs(0, undefined, { jitter: () => 0.999999 })).toBeCloseTo(75, 3);
    // Out-of-range jitter is clamped, never negative or larger than the base delay.
    expect(backoffDelayMs(0, undefined, { jitter: () => 7 })).toBe(75);
    expect(backoffDelayMs(0, undefined, { jitter: () => -1 })).toBe(100);
  });

  it('honours retry-after up to maxMs, exactly and without jitter', () => {
    expect(backoffDelayMs(0, 0, noJitter)).toBe(0);
    expect(backoffDelayMs(0, 1500, { jitter: () => 0.9 })).toBe(1500);
    expect(backoffDelayMs(3, 2000)).toBe(2000);
    expect(backoffDelayMs(0, 5000, { maxMs: 10_000 })).toBe(5000);
  });

  it('returns null when retry-after is longer than maxMs', () => {
    expect(backoffDelayMs(0, 2001)).toBeNull();
    expect(backoffDelayMs(0, 60_000)).toBeNull();
    expect(backoffDelayMs(0, 5000, { maxMs: 4000 })).toBeNull();
  });

  it('ignores an invalid retry-after', () => {
    expect(backoffDelayMs(0, -1, noJitter)).toBe(100);
    expect(backoffDelayMs(0, Number.NaN, noJitter)).toBe(100);
  });
});

/** Drive a plan: `outcomes[provider]` gives each attempt's failure (default: not retryable). */
function run(candidates: string[], outcomes: Record<string, AttemptOutcome | AttemptOutcome[]>, opts: PlanOptions = {}): PlannedAttempt[] {
  const plan = planAttempts(candidates, { backoff: noJitter, ...opts });
  const seen: PlannedAttempt[] = [];
  const tries = new Map<string, number>();
  for (let step = plan.next(); step !== null; step = plan.next()) {
    seen.push(step);
    const n = tries.get(step.provider) ?? 0;
    tries.set(step.provider, n + 1);
    const o = outcomes[step.provider];
    const outcome = Array.isArray(o) ? o[Math.min(n, o.length - 1)] : o;
    if (outcome) plan.failed(outcome);
    if (seen.length > 100) throw new Error('runaway plan');
  }
  return seen;
}

const retryable: AttemptOutcome = { retrySame: true };
const fatal: AttemptOutcome = { retrySame: false };
const order = (steps: PlannedAttempt[]): string[] => steps.map((s) => s.provider);

describe('planAttempts', () => {
  it('a single candidate is retried once with backoff', () => {
    const steps = run(['a'], { a: retryable });
    expect(steps).toEqual([
      { provider: 'a', attempt: 0, retry: 0, delayMs: 0 },
      { provider: 'a', attempt: 1, retry: 1, delayMs: 100 },
    ]);
  });

  it('sameProviderRetries allows more retries, with growing delays, within maxAttempts', () => {
    const steps = run(['a'], { a: retryable }, { sameProviderRetries: 5, maxAttempts: 4 });
    expect(steps.map((s) => s.delayMs)).toEqual([0, 100, 200, 400]);
    expect(steps.map((s) => s.retry)).toEqual([0, 1, 2, 3]);
  });

  it('no retry when the failure does not allow it', () => {
    expect(order(run(['a'], { a: fatal }))).toEqual(['a']);
    expect(order(run(['a'], {}))).toEqual(['a']); // not reported = not retryable
  });

  it('sameProviderRetries 0 disables retries', () => {
    expect(order(run(['a', 'b'], { a: retryable, b: retryable }, { sameProviderRetries: 0 }))).toEqual(['a', 'b']);
  });

  it('each candidate once first, immediately, then retries of those that allow it', () => {
    const steps = run(['a', 'b'], { a: retryable, b: retryable });
    expect(steps).toEqual([
      { provider: 'a', attempt: 0, retry: 0, delayMs: 0 },
      { provider: 'b', attempt: 1, retry: 0, delayMs: 0 },
      { provider: 'a', attempt: 2, retry: 1, delayMs: 100 },
    ]);
  });

  it('skips candidates whose own failure does not allow a retry', () => {
    expect(order(run(['a', 'b'], { a: fatal, b: retryable }))).toEqual(['a', 'b', 'b']);
    expect(order(run(['a', 'b'], { a: fatal, b: fatal }))).toEqual(['a', 'b']);
  });

  it('maxAttempts caps the first pass too', () => {
    expect(order(run(['a', 'b', 'c', 'd'], { a: retryable, b: retryable, c: retryable, d: retryable }))).toEqual(['a', 'b', 'c']);
    expect(order(run(['a', 'b'], { a: retryable }, { maxAttempts: 1 }))).toEqual(['a']);
  });

  it('retries round-robin when more attempts are allowed', () => {
    const steps = run(['a', 'b'], { a: retryable, b: retryable }, { maxAttempts: 10, sameProviderRetries: 2 });
    expect(order(steps)).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(steps.map((s) => s.delayMs)).toEqual([0, 0, 100, 100, 200, 200]);
  });

  it('uses the latest failure of a candidate', () => {
    // a fails retryably, then its retry fails fatally: no second retry even though allowed.
    const steps = run(['a'], { a: [retryable, fatal] }, { sameProviderRetries: 3, maxAttempts: 5 });
    expect(order(steps)).toEqual(['a', 'a']);
  });

  it('honours a candidate retry-after as the delay of its retry', () => {
    const steps = run(['a', 'b'], { a: { retrySame: true, retryAfterMs: 1200 }, b: fatal });
    expect(steps.map((s) => [s.provider, s.delayMs])).toEqual([['a', 0], ['b', 0], ['a', 1200]]);
  });

  it('does not retry a provider that asked for longer than maxMs', () => {
    expect(order(run(['a'], { a: { retrySame: true, retryAfterMs: 30_000 } }))).toEqual(['a']);
    // ...but another candidate can still use the remaining attempt.
    const steps = run(['a', 'b'], { a: { retrySame: true, retryAfterMs: 30_000 }, b: retryable });
    expect(order(steps)).toEqual(['a', 'b', 'b']);
    // A larger maxMs makes the long retry-after acceptable.
    const patient = run(['a'], { a: { retrySame: true, retryAfterMs: 3000 } }, { backoff: { maxMs: 5000 } });
    expect(patient.map((s) => s.delayMs)).toEqual([0, 3000]);
  });

  it('ends at once with no candidates', () => {
    const plan = planAttempts([]);
    expect(plan.next()).toBeNull();
    expect(plan.attempts).toBe(0);
  });

  it('counts attempts and ignores a report with no attempt outstanding', () => {
    const plan = planAttempts(['a'], { backoff: noJitter });
    plan.failed(retryable); // nothing handed out yet
    expect(plan.next()?.provider).toBe('a');
    expect(plan.attempts).toBe(1);
    expect(plan.next()).toBeNull(); // the first attempt was not reported: no retry
  });
});
