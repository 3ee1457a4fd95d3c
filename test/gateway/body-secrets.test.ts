import { describe, expect, it } from 'vitest';
import { CallRecord } from '../../core/gateway/call-record.ts';
import { rowToTuple } from '../../core/storage/call-row-tuple.ts';
import { serialize } from 'node:v8';

const served = (apiKey: string | null, ...more: Array<string | null>): CallRecord => {
  const r = new CallRecord({ requestId: 'req_x', startedAt: 0, startedPerf: 0, key: null, endpoint: '/v1/chat/completions', stream: false });
  for (const k of more) r.secrets.push(k);
  r.servedBy({ attempts: [], candidate: { provider: 'p', model: 'm' }, apiKey });
  return r;
};
const secretsOf = (r: CallRecord, storeBodies = true) => r.toRow(200, null, null, storeBodies, 'v').bodySecrets;

describe("a row's body secrets", () => {
  it('are the keys that served the call; calls served with the same one key share one list', () => {
    const a = secretsOf(served('sk-upstream-0123456789abcdef'));
    // A key read again from the environment is an equal string, not the same one.
    const b = secretsOf(served(['sk-upstream-', '0123456789abcdef'].join('')));
    expect(a).toEqual(['sk-upstream-0123456789abcdef']);
    expect(b).toBe(a);
    const other = secretsOf(served('sk-other-0123456789abcdef'));
    expect(other).toEqual(['sk-other-0123456789abcdef']);
    expect(secretsOf(served('sk-upstream-0123456789abcdef'))).not.toBe(a);
    expect(secretsOf(served(null))).toEqual([]);
    expect(secretsOf(served('sk-last-0123456789abcdef', 'sk-first-0123456789abcdef', null))).toEqual(['sk-first-0123456789abcdef', 'sk-last-0123456789abcdef']);
    expect(secretsOf(served('sk-upstream-0123456789abcdef'), false)).toBeUndefined();
  });

  it('shared, cross to the audit thread once a batch: the same list in a batch is written once', () => {
    const rows = Array.from({ length: 50 }, () => served('sk-batch-0123456789abcdef').toRow(200, null, null, true, 'v'));
    const shared = serialize(rows.map(rowToTuple)).length;
    const copies = serialize(rows.map((r) => rowToTuple({ ...r, bodySecrets: [...(r.bodySecrets ?? [])] }))).length;
    expect(copies - shared).toBeGreaterThan(49 * 'sk-batch-0123456789abcdef'.length);
  });
});
