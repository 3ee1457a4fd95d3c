import { describe, expect, it } from 'vitest';
import { attemptsJson } from '../../core/gateway/call-record.ts';
import type { AttemptRecord } from '../../core/gateway/attempts.ts';

const stringified = (attempts: AttemptRecord[]): string =>
  JSON.stringify(attempts.map((a) => ({ provider: a.provider, model: a.model, status: a.status, error: a.error, duration_ms: a.durationMs })));

describe('attemptsJson', () => {
  it('writes what JSON.stringify writes for the same attempts', () => {
    const cases: AttemptRecord[][] = [
      [],
      [{ provider: 'openai', model: 'gpt-4o-mini', status: 200, error: null, durationMs: 12 }],
      [
        { provider: 'a"b\\c', model: 'm\n\u0001\u2028', status: null, error: 'connect ECONNREFUSED "x"', durationMs: 0 },
        { provider: 'été', model: '\ud800lone', status: 529, error: 'overloaded\u0000', durationMs: 30_001 },
        { provider: 'p', model: 'm', status: Number.NaN, error: null, durationMs: Number.POSITIVE_INFINITY },
        { provider: 'p', model: 'm', status: -0, error: '', durationMs: 1e21 },
      ],
    ];
    for (const attempts of cases) {
      expect(attemptsJson(attempts)).toBe(stringified(attempts));
      expect(JSON.parse(attemptsJson(attempts))).toEqual(JSON.parse(stringified(attempts)));
    }
  });
});
