import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../core/routing/circuit-breaker.ts';
import { ManualClock } from './manual-clock.ts';

function setup(opts: { failureThreshold?: number; cooldownMs?: number; maxCooldownMs?: number } = {}) {
  const clock = new ManualClock();
  const breaker = new CircuitBreaker({ clock, ...opts });
  return { clock, breaker };
}

function openIt(breaker: CircuitBreaker, provider = 'a', n = 3): void {
  for (let i = 0; i < n; i++) breaker.onFailure(provider);
}

describe('CircuitBreaker', () => {
  it('starts closed and lets everything through', () => {
    const { breaker } = setup();
    expect(breaker.state('a')).toBe('closed');
    expect(breaker.canAttempt('a')).toBe(true);
    expect(breaker.canAttempt('a')).toBe(true);
    expect(breaker.snapshot()).toEqual([]);
  });

  it('opens after the threshold of consecutive failures, not before', () => {
    const { breaker } = setup();
    breaker.onFailure('a');
    breaker.onFailure('a');
    expect(breaker.state('a')).toBe('closed');
    expect(breaker.canAttempt('a')).toBe(true);
    breaker.onFailure('a');
    expect(breaker.state('a')).toBe('open');
    expect(breaker.canAttempt('a')).toBe(false);
    expect(breaker.isAvailable('a')).toBe(false);
  });

  it('a success resets the consecutive count', () => {
    const { breaker } = setup();
    breaker.onFailure('a');
    breaker.onFailure('a');
    breaker.onSuccess('a');
    breaker.onFailure('a');
    breaker.onFailure('a');
    expect(breaker.state('a')).toBe('closed');
    expect(breaker.snapshotOf('a').consecutiveFailures).toBe(2);
  });

  it('honours a custom threshold and keeps providers independent', () => {
    const { breaker } = setup({ failureThreshold: 1 });
    breaker.onFailure('a');
    expect(breaker.state('a')).toBe('open');
    expect(breaker.state('b')).toBe('closed');
    expect(breaker.canAttempt('b')).toBe(true);
  });

  it('stays open for the whole cooldown', () => {
    const { breaker, clock } = setup();
    openIt(breaker);
    clock.advance(29_999);
    expect(breaker.state('a')).toBe('open');
    expect(breaker.canAttempt('a')).toBe(false);
  });

  it('after the cooldown lets exactly one probe through', () => {
    const { breaker, clock } = setup();
    openIt(breaker);
    clock.advance(30_000);
    expect(breaker.state('a')).toBe('half-open');
    expect(breaker.isAvailable('a')).toBe(true);
    expect(breaker.isAvailable('a')).toBe(true); // peeking claims nothing
    expect(breaker.canAttempt('a')).toBe(true);
    expect(breaker.canAttempt('a')).toBe(false);
    expect(breaker.canAttempt('a')).toBe(false);
    expect(breaker.isAvailable('a')).toBe(false);
    expect(breaker.state('a')).toBe('half-open');
    expect(breaker.snapshotOf('a').probeInFlight).toBe(true);
  });

  it('closes when the probe succeeds', () => {
    const { breaker, clock } = setup();
    openIt(breaker);
    clock.advance(30_000);
    expect(breaker.canAttempt('a')).toBe(true);
    breaker.onSuccess('a');
    expect(breaker.state('a')).toBe('closed');
    expect(breaker.canAttempt('a')).toBe(true);
    expect(breaker.canAttempt('a')).toBe(true);
    expect(breaker.snapshotOf('a')).toMatchObject({ consecutiveFailures: 0, openedAt: null, nextProbeAt: null });
  });

  it('re-opens on a failed probe, doubling the cooldown up to the cap', () => {
    const { breaker, clock } = setup({ cooldownMs: 10_000, maxCooldownMs: 25_000 });
    openIt(breaker);
    clock.advance(10_000);
    expect(breaker.canAttempt('a')).toBe(true);
    breaker.onFailure('a');
    expect(breaker.state('a')).toBe('open');
    expect(breaker.snapshotOf('a')).toMatchObject({ cooldownMs: 20_000, openedAt: clock.t, nextProbeAt: clock.t + 20_000 });
    clock.advance(19_999);
    expect(breaker.canAttempt('a')).toBe(false);
    clock.advance(1);
    expect(breaker.canAttempt('a')).toBe(true);
    breaker.onFailure('a');
    expect(breaker.snapshotOf('a').cooldownMs).toBe(25_000); // capped
    clock.advance(25_000);
    expect(breaker.canAttempt('a')).toBe(true);
    breaker.onSuccess('a');
    // Closing resets the cooldown: the next opening starts from the base again.
    openIt(breaker);
    expect(breaker.snapshotOf('a').cooldownMs).toBe(10_000);
  });

  it('a fixed cooldown when maxCooldownMs equals cooldownMs', () => {
    const { breaker, clock } = setup({ cooldownMs: 1000, maxCooldownMs: 1000 });
    openIt(breaker);
    clock.advance(1000);
    breaker.canAttempt('a');
    breaker.onFailure('a');
    expect(breaker.snapshotOf('a').cooldownMs).toBe(1000);
  });

  it('a probe that never reports does not wedge the breaker', () => {
    const { breaker, clock } = setup();
    openIt(breaker);
    clock.advance(30_000);
    expect(breaker.canAttempt('a')).toBe(true); // the probe's client vanishes, nothing is reported
    clock.advance(29_999);
    expect(breaker.canAttempt('a')).toBe(false);
    clock.advance(1);
    expect(breaker.isAvailable('a')).toBe(true);
    expect(breaker.canAttempt('a')).toBe(true); // a second probe
    expect(breaker.canAttempt('a')).toBe(false);
    breaker.onSuccess('a');
    expect(breaker.state('a')).toBe('closed');
  });

  it('a neutral outcome frees the probe slot without changing counters', () => {
    const { breaker, clock } = setup();
    openIt(breaker);
    clock.advance(30_000);
    expect(breaker.canAttempt('a')).toBe(true);
    breaker.onNeutral('a'); // e.g. the probe got a 429
    expect(breaker.state('a')).toBe('half-open');
    expect(breaker.snapshotOf('a').consecutiveFailures).toBe(3);
    expect(breaker.canAttempt('a')).toBe(true);
    expect(breaker.canAttempt('a')).toBe(false);
    // onNeutral on a closed provider is a no-op.
    breaker.onNeutral('b');
    expect(breaker.state('b')).toBe('closed');
  });

  it('a failure while open (a straggler or forced attempt) neither moves the probe time nor doubles', () => {
    const { breaker, clock } = setup();
    openIt(breaker);
    const before = breaker.snapshotOf('a');
    clock.advance(10_000);
    breaker.onFailure('a');
    const after = breaker.snapshotOf('a');
    expect(after.consecutiveFailures).toBe(4);
    expect(after.nextProbeAt).toBe(before.nextProbeAt);
    expect(after.cooldownMs).toBe(30_000);
    clock.advance(20_000);
    expect(breaker.canAttempt('a')).toBe(true);
  });

  it('a success from any attempt closes an open breaker', () => {
    const { breaker } = setup();
    openIt(breaker);
    breaker.onSuccess('a');
    expect(breaker.state('a')).toBe('closed');
  });

  it('snapshot lists known providers with state, failures, opened at and next probe at', () => {
    const { breaker, clock } = setup();
    const t0 = clock.t;
    openIt(breaker, 'b');
    breaker.onFailure('a');
    expect(breaker.snapshot()).toEqual([
      { provider: 'a', state: 'closed', consecutiveFailures: 1, openedAt: null, nextProbeAt: null, cooldownMs: 30_000, probeInFlight: false },
      { provider: 'b', state: 'open', consecutiveFailures: 3, openedAt: t0, nextProbeAt: t0 + 30_000, cooldownMs: 30_000, probeInFlight: false },
    ]);
    breaker.reset('b');
    expect(breaker.snapshot().map((s) => s.provider)).toEqual(['a']);
    breaker.reset();
    expect(breaker.snapshot()).toEqual([]);
  });
});
