import { describe, expect, it } from 'vitest';
import { LatencyTracker } from '../../core/routing/latency-tracker.ts';

describe('LatencyTracker', () => {
  it('has no estimate before a sample', () => {
    expect(new LatencyTracker().estimate('a', 'm')).toBeUndefined();
  });

  it('takes the first sample as is, then an EWMA with alpha 0.3', () => {
    const t = new LatencyTracker();
    t.record('a', 'm', 100);
    expect(t.estimate('a', 'm')).toBe(100);
    t.record('a', 'm', 200);
    expect(t.estimate('a', 'm')).toBeCloseTo(130, 10);
    t.record('a', 'm', 30);
    expect(t.estimate('a', 'm')).toBeCloseTo(0.3 * 30 + 0.7 * 130, 10);
  });

  it('keeps provider+model pairs apart', () => {
    const t = new LatencyTracker();
    t.record('a', 'm1', 100);
    t.record('a', 'm2', 500);
    t.record('b', 'm1', 900);
    expect(t.estimate('a', 'm1')).toBe(100);
    expect(t.estimate('a', 'm2')).toBe(500);
    expect(t.estimate('b', 'm1')).toBe(900);
    expect(t.estimate('b', 'm2')).toBeUndefined();
  });

  it('honours a custom alpha and rejects an invalid one', () => {
    const t = new LatencyTracker({ alpha: 1 });
    t.record('a', 'm', 100);
    t.record('a', 'm', 40);
    expect(t.estimate('a', 'm')).toBe(40);
    expect(() => new LatencyTracker({ alpha: 0 })).toThrow(RangeError);
    expect(() => new LatencyTracker({ alpha: 1.5 })).toThrow(RangeError);
  });

  it('ignores negative and non-finite samples', () => {
    const t = new LatencyTracker();
    t.record('a', 'm', -5);
    t.record('a', 'm', Number.NaN);
    t.record('a', 'm', Number.POSITIVE_INFINITY);
    expect(t.estimate('a', 'm')).toBeUndefined();
  });

  it('snapshots and resets per provider', () => {
    const t = new LatencyTracker();
    t.record('a', 'm', 10);
    t.record('a', 'n', 20);
    t.record('b', 'm', 30);
    expect(t.snapshot()).toContainEqual({ provider: 'b', model: 'm', ttftMs: 30, samples: 1 });
    t.reset('a');
    expect(t.snapshot()).toEqual([{ provider: 'b', model: 'm', ttftMs: 30, samples: 1 }]);
    t.reset();
    expect(t.snapshot()).toEqual([]);
  });
});
