import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../core/routing/circuit-breaker.ts';
import { orderCandidates, type Candidate } from '../../core/routing/strategy.ts';
import { ManualClock } from './manual-clock.ts';

interface C extends Candidate {
  price: number | null;
  ttft?: number;
}

const c = (provider: string, priority: number, seq: number, price: number | null = null, ttft?: number): C => ({
  provider,
  priority,
  seq,
  model: 'm',
  price,
  ttft,
});

function deps(breaker = new CircuitBreaker({ clock: new ManualClock() })) {
  return { priceOf: (x: C) => x.price, latencyOf: (x: C) => x.ttft, breaker };
}

const names = (xs: C[]): string[] => xs.map((x) => x.provider);

describe('orderCandidates: priority', () => {
  it('ascending priority, ties by seq', () => {
    const cands = [c('d', 100, 3), c('a', 100, 0), c('b', 10, 5), c('c', 100, 1)];
    expect(names(orderCandidates(cands, 'priority', deps()))).toEqual(['b', 'a', 'c', 'd']);
  });

  it('does not mutate its input', () => {
    const cands = [c('b', 2, 0), c('a', 1, 1)];
    orderCandidates(cands, 'priority', deps());
    expect(names(cands)).toEqual(['b', 'a']);
  });
});

describe('orderCandidates: cheapest', () => {
  it('ascending price, unknown price last, ties by priority then seq', () => {
    const cands = [
      c('unknown-late', 1, 9, null),
      c('pricey', 1, 0, 10),
      c('cheap-b', 50, 2, 1),
      c('cheap-a', 50, 1, 1),
      c('cheap-top', 5, 8, 1),
      c('free', 100, 7, 0),
      c('unknown-early', 1, 3, null),
      c('bad', 0, 0, Number.NaN),
    ];
    expect(names(orderCandidates(cands, 'cheapest', deps()))).toEqual([
      'free',
      'cheap-top',
      'cheap-a',
      'cheap-b',
      'pricey',
      'bad', // NaN is unknown; unknowns by priority then seq
      'unknown-early',
      'unknown-late',
    ]);
  });
});

describe('orderCandidates: fastest', () => {
  it('ascending latency, ties by priority then seq', () => {
    const cands = [c('slow', 1, 0, null, 900), c('fast-b', 2, 1, null, 100), c('fast-a', 1, 2, null, 100)];
    expect(names(orderCandidates(cands, 'fastest', deps()))).toEqual(['fast-a', 'fast-b', 'slow']);
  });

  it('unknown latency ranks at the median of the known: after the fast, before the slow', () => {
    const cands = [c('new', 1, 0), c('slow', 1, 1, null, 5000), c('fast', 1, 2, null, 100)];
    expect(names(orderCandidates(cands, 'fastest', deps()))).toEqual(['fast', 'new', 'slow']);
  });

  it('unknown goes before a known candidate equal to the median, so it gets measured', () => {
    const cands = [c('new', 1, 0), c('x', 1, 1, null, 300), c('y', 1, 2, null, 200), c('z', 1, 3, null, 400)];
    expect(names(orderCandidates(cands, 'fastest', deps()))).toEqual(['y', 'new', 'x', 'z']);
  });

  it('with one measured rival, an unmeasured provider is tried next', () => {
    const cands = [c('measured', 1, 0, null, 50), c('new', 1, 1)];
    expect(names(orderCandidates(cands, 'fastest', deps()))).toEqual(['new', 'measured']);
  });

  it('with no estimates at all it is the priority order', () => {
    const cands = [c('b', 2, 0), c('a', 1, 1), c('c', 2, 2)];
    expect(names(orderCandidates(cands, 'fastest', deps()))).toEqual(['a', 'b', 'c']);
  });
});

describe('orderCandidates: health', () => {
  function openBreaker(...providers: string[]) {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    for (const p of providers) for (let i = 0; i < 3; i++) breaker.onFailure(p);
    return { clock, breaker };
  }

  it('moves open providers to the end in strategy order, without removing them', () => {
    const { breaker } = openBreaker('a', 'c');
    const cands = [c('a', 1, 0, 1), c('b', 2, 1, 3), c('c', 3, 2, 2), c('d', 4, 3, 4)];
    expect(names(orderCandidates(cands, 'priority', deps(breaker)))).toEqual(['b', 'd', 'a', 'c']);
    expect(names(orderCandidates(cands, 'cheapest', deps(breaker)))).toEqual(['b', 'd', 'a', 'c']);
  });

  it('keeps everything, in order, when every breaker is open', () => {
    const { breaker } = openBreaker('a', 'b');
    const cands = [c('b', 2, 1), c('a', 1, 0)];
    expect(names(orderCandidates(cands, 'priority', deps(breaker)))).toEqual(['a', 'b']);
  });

  it('ordering does not consume the half-open probe slot', () => {
    const { breaker, clock } = openBreaker('a');
    clock.advance(30_000);
    const cands = [c('a', 1, 0), c('b', 2, 1)];
    expect(names(orderCandidates(cands, 'priority', deps(breaker)))).toEqual(['a', 'b']);
    expect(names(orderCandidates(cands, 'priority', deps(breaker)))).toEqual(['a', 'b']);
    expect(breaker.canAttempt('a')).toBe(true); // the slot is still there for the real attempt
    // Once claimed, later orderings put the half-open provider last.
    expect(names(orderCandidates(cands, 'priority', deps(breaker)))).toEqual(['b', 'a']);
  });
});
