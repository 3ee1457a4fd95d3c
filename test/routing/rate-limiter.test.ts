import { describe, expect, it } from 'vitest';
import { formatDuration, RateLimiter } from '../../core/routing/rate-limiter.ts';
import { ManualClock } from './manual-clock.ts';

function setup() {
  const clock = new ManualClock();
  return { clock, limiter: new RateLimiter({ clock }) };
}

describe('RateLimiter: RPM', () => {
  it('allows up to the limit in the window, then refuses with a retry-after', () => {
    const { limiter, clock } = setup();
    for (let i = 0; i < 3; i++) {
      expect(limiter.check('k', { rpm: 3 }).allowed).toBe(true);
      clock.advance(1000);
    }
    const denied = limiter.check('k', { rpm: 3 });
    expect(denied.allowed).toBe(false);
    // The first request (at t0) leaves the window at t0 + 60 s; now is t0 + 3 s.
    expect(denied.retryAfterMs).toBe(57_000);
    expect(denied.headers['x-ratelimit-remaining-requests']).toBe('0');
  });

  it('refused requests do not count', () => {
    const { limiter, clock } = setup();
    limiter.check('k', { rpm: 1 });
    for (let i = 0; i < 5; i++) expect(limiter.check('k', { rpm: 1 }).allowed).toBe(false);
    clock.advance(60_000);
    expect(limiter.check('k', { rpm: 1 }).allowed).toBe(true);
  });

  it('slides: a slot frees exactly when its request leaves the window', () => {
    const { limiter, clock } = setup();
    limiter.check('k', { rpm: 2 }); // t0
    clock.advance(30_000);
    limiter.check('k', { rpm: 2 }); // t0 + 30 s
    clock.advance(29_999);
    expect(limiter.check('k', { rpm: 2 })).toMatchObject({ allowed: false, retryAfterMs: 1 });
    clock.advance(1);
    expect(limiter.check('k', { rpm: 2 }).allowed).toBe(true); // t0's request left
    expect(limiter.check('k', { rpm: 2 })).toMatchObject({ allowed: false, retryAfterMs: 30_000 });
  });

  it('keeps keys apart', () => {
    const { limiter } = setup();
    expect(limiter.check('a', { rpm: 1 }).allowed).toBe(true);
    expect(limiter.check('a', { rpm: 1 }).allowed).toBe(false);
    expect(limiter.check('b', { rpm: 1 }).allowed).toBe(true);
  });

  it('sets the request headers', () => {
    const { limiter, clock } = setup();
    expect(limiter.check('k', { rpm: 10 }).headers).toEqual({
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '9',
      'x-ratelimit-reset-requests': '1m0s',
    });
    clock.advance(1500);
    expect(limiter.check('k', { rpm: 10 }).headers).toEqual({
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '8',
      'x-ratelimit-reset-requests': '1m0s',
    });
    clock.advance(59_000);
    // t0's request has left, t0 + 1.5 s's is still in, and this one counts: 2 used. The reset is until
    // the newest (this one) leaves: a full window.
    expect(limiter.check('k', { rpm: 10 }).headers).toMatchObject({
      'x-ratelimit-remaining-requests': '8',
      'x-ratelimit-reset-requests': '1m0s',
    });
  });

  it('a limit of 0 refuses everything', () => {
    const { limiter } = setup();
    expect(limiter.check('k', { rpm: 0 })).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
  });

  it('no limits: always allowed, no headers', () => {
    const { limiter } = setup();
    for (let i = 0; i < 100; i++) expect(limiter.check('k', { rpm: null, tpm: undefined })).toEqual({ allowed: true, retryAfterMs: 0, headers: {}, reservation: null });
  });
});

describe('RateLimiter: TPM', () => {
  it('counts tokens after the call and refuses once the window holds the limit', () => {
    const { limiter, clock } = setup();
    expect(limiter.check('k', { tpm: 1000 }).allowed).toBe(true);
    limiter.recordTokens('k', 600);
    clock.advance(10_000);
    const second = limiter.check('k', { tpm: 1000 });
    expect(second.allowed).toBe(true); // 600 < 1000: in-flight calls are not reserved
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('400');
    limiter.recordTokens('k', 500); // now 1100 >= 1000
    clock.advance(10_000);
    const denied = limiter.check('k', { tpm: 1000 });
    expect(denied.allowed).toBe(false);
    // Dropping the 600 (recorded at t0) brings the sum to 500 < 1000: at t0 + 60 s, now t0 + 20 s.
    expect(denied.retryAfterMs).toBe(40_000);
    expect(denied.headers).toEqual({
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '50s', // the newest record (t0 + 10 s) leaves at t0 + 70 s
    });
    clock.advance(40_000);
    expect(limiter.check('k', { tpm: 1000 })).toMatchObject({ allowed: true, headers: { 'x-ratelimit-remaining-tokens': '500' } });
  });

  it('a request exactly at the limit is refused', () => {
    const { limiter } = setup();
    limiter.recordTokens('k', 100);
    expect(limiter.check('k', { tpm: 100 }).allowed).toBe(false);
    expect(limiter.check('k', { tpm: 101 }).allowed).toBe(true);
  });

  it('ignores non-positive or non-finite token counts', () => {
    const { limiter } = setup();
    limiter.recordTokens('k', 0);
    limiter.recordTokens('k', -10);
    limiter.recordTokens('k', Number.NaN);
    expect(limiter.check('k', { tpm: 1 }).headers['x-ratelimit-remaining-tokens']).toBe('1');
  });

  it('an empty window resets to "0s"', () => {
    const { limiter } = setup();
    expect(limiter.check('k', { tpm: 50 }).headers['x-ratelimit-reset-tokens']).toBe('0s');
  });

  it('both limits: both header sets, and the longer wait wins', () => {
    const { limiter, clock } = setup();
    limiter.check('k', { rpm: 1, tpm: 100 }); // t0
    clock.advance(5000);
    limiter.recordTokens('k', 200); // t0 + 5 s
    clock.advance(1000);
    const d = limiter.check('k', { rpm: 1, tpm: 100 });
    expect(d.allowed).toBe(false);
    // RPM frees at t0 + 60 s (54 s away), TPM at t0 + 65 s (59 s away).
    expect(d.retryAfterMs).toBe(59_000);
    expect(d.headers).toEqual({
      'x-ratelimit-limit-requests': '1',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '54s',
      'x-ratelimit-limit-tokens': '100',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '59s',
    });
  });

  it('forgets a key on reset', () => {
    const { limiter } = setup();
    limiter.check('k', { rpm: 1 });
    limiter.reset('k');
    expect(limiter.check('k', { rpm: 1 }).allowed).toBe(true);
  });
});

describe('formatDuration (Go time.Duration.String)', () => {
  it.each([
    [0, '0s'],
    [1000, '1s'],
    [360_000, '6m0s'],
    [12, '12ms'],
    [1500, '1.5s'],
    [1, '1ms'],
    [999, '999ms'],
    [1.5, '1.5ms'],
    [0.5, '500µs'],
    [0.0015, '1.5µs'],
    [0.0001, '100ns'],
    [0.000001, '1ns'],
    [60_000, '1m0s'],
    [61_000, '1m1s'],
    [59_999, '59.999s'],
    [3_600_000, '1h0m0s'],
    [3_661_001, '1h1m1.001s'],
    [90_061_001, '25h1m1.001s'],
    [100 * 3_600_000, '100h0m0s'],
    [-1500, '-1.5s'],
    [-12, '-12ms'],
    [1000.000001, '1.000000001s'],
  ])('%s ms -> %s', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });

  it('rejects non-finite input', () => {
    expect(() => formatDuration(Number.NaN)).toThrow(RangeError);
  });
});
