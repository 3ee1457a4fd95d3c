import { describe, expect, it } from 'vitest';
import { classifyFailure, retryAfterMs, type AttemptFailure } from '../../core/routing/failure-policy.ts';
import { ManualClock } from './manual-clock.ts';

describe('classifyFailure', () => {
  const table: [AttemptFailure, boolean, boolean, boolean][] = [
    // failure, failover, countsAgainstHealth, retrySame
    [{ kind: 'connect' }, true, true, true],
    [{ kind: 'timeout' }, true, true, false],
    [{ kind: 'reset' }, true, true, true],
    [{ kind: 'http', status: 500 }, true, true, true],
    [{ kind: 'http', status: 502 }, true, true, true],
    [{ kind: 'http', status: 503 }, true, true, true],
    [{ kind: 'http', status: 504 }, true, true, true],
    [{ kind: 'http', status: 529 }, true, true, true],
    [{ kind: 'http', status: 408 }, true, true, true],
    [{ kind: 'http', status: 429 }, true, false, true],
    [{ kind: 'http', status: 401 }, true, true, false],
    [{ kind: 'http', status: 402 }, true, true, false],
    [{ kind: 'http', status: 403 }, true, true, false],
    [{ kind: 'http', status: 400 }, false, false, false],
    [{ kind: 'http', status: 404 }, true, false, false],
    [{ kind: 'http', status: 409 }, false, false, false],
    [{ kind: 'http', status: 413 }, false, false, false],
    [{ kind: 'http', status: 415 }, false, false, false],
    [{ kind: 'http', status: 422 }, false, false, false],
    [{ kind: 'http' }, true, true, true],
    [{ kind: 'http', status: 200 }, true, true, true],
  ];
  it.each(table)('%j -> failover %s, health %s, retrySame %s', (f, failover, countsAgainstHealth, retrySame) => {
    expect(classifyFailure(f)).toEqual({ failover, countsAgainstHealth, retrySame });
  });

  it('returns a fresh object each time', () => {
    const a = classifyFailure({ kind: 'connect' });
    a.failover = false;
    expect(classifyFailure({ kind: 'connect' }).failover).toBe(true);
  });
});

describe('retryAfterMs', () => {
  const clock = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));

  it('reads retry-after-ms as float milliseconds', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250' }, clock)).toBe(250);
    expect(retryAfterMs({ 'retry-after-ms': '12.5' }, clock)).toBe(12.5);
    expect(retryAfterMs({ 'retry-after-ms': '0' }, clock)).toBe(0);
  });

  it('prefers retry-after-ms over retry-after', () => {
    expect(retryAfterMs({ 'retry-after-ms': '300', 'retry-after': '5' }, clock)).toBe(300);
  });

  it('reads retry-after as float seconds', () => {
    expect(retryAfterMs({ 'retry-after': '2' }, clock)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': '1.5' }, clock)).toBe(1500);
    expect(retryAfterMs({ 'retry-after': ' 3 ' }, clock)).toBe(3000);
  });

  it('reads retry-after as an HTTP-date relative to the clock', () => {
    expect(retryAfterMs({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, clock)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': 'Wednesday, 01-Jan-25 00:00:10 GMT' }, clock)).toBe(10_000);
    expect(retryAfterMs({ 'retry-after': 'Wed Jan  1 00:00:05 2025' }, clock)).toBe(5000);
  });

  it('ignores a date in the past', () => {
    expect(retryAfterMs({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }, clock)).toBeUndefined();
  });

  it('ignores negatives and garbage, falling through to the next header', () => {
    expect(retryAfterMs({ 'retry-after-ms': '-5', 'retry-after': '2' }, clock)).toBe(2000);
    expect(retryAfterMs({ 'retry-after-ms': 'soon', 'retry-after': '1' }, clock)).toBe(1000);
    expect(retryAfterMs({ 'retry-after-ms': '', 'retry-after': '1' }, clock)).toBe(1000);
    expect(retryAfterMs({ 'retry-after': '-1' }, clock)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': 'later' }, clock)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': 'foo 1' }, clock)).toBeUndefined(); // V8 would parse this as a date
    expect(retryAfterMs({ 'retry-after': '1e3' }, clock)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': 'NaN' }, clock)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': 'Infinity' }, clock)).toBeUndefined();
    expect(retryAfterMs({}, clock)).toBeUndefined();
  });

  it('matches header names case-insensitively, takes the first of repeated values, accepts Headers', () => {
    expect(retryAfterMs({ 'Retry-After-Ms': '40' }, clock)).toBe(40);
    expect(retryAfterMs({ 'retry-after': ['2', '9'] }, clock)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'Retry-After': '3' }), clock)).toBe(3000);
  });
});
