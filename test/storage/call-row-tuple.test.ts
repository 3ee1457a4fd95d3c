import { expect, it } from 'vitest';
import type { CallRow } from '../../core/storage/call-row.ts';
import { rowToTuple, tupleToRow } from '../../core/storage/call-row-tuple.ts';

// `Required` makes the compiler list every field: a field added to CallRow and not to the tuple fails here
// (typecheck), and the round trip below shows the value was carried.
const full: Required<CallRow> = {
  id: 'req_1', time: 1_700_000_000_123, keyId: 'key_1', keyName: 'tool', endpoint: '/v1/chat/completions', modelRequested: 'gpt-x',
  model: 'gpt-x-2', provider: 'openai', status: 429, errorType: 'rate_limit_error', errorMessage: 'slow down', stream: true,
  inputTokens: 11, outputTokens: 12, cachedTokens: 13, cacheWriteTokens: 14, reasoningTokens: 15, costUsd: 0.25, pricing: 'estimated',
  priceVersion: 'v9', latencyMs: 16, ttftMs: 17, attempts: 2, attemptsJson: '[{"provider":"openai"}]', requestBody: '{"a":1}',
  requestBytes: new Uint8Array([123, 125]), responseBody: '{"b":2}', bodySecrets: ['sk-secret-value-1234567'], userAgent: 'ua/1',
  sessionId: 'sess-1', replayed: true, requestBytesTotal: 70_000,
};

it('carries every field of a row, each in its place', () => {
  const back = tupleToRow(structuredClone(rowToTuple(full)));
  expect(back).toEqual(full);
  expect(Object.keys(back).sort()).toEqual(Object.keys(full).sort());
});

it('leaves absent optional fields absent', () => {
  const { requestBytes: _b, requestBytesTotal: _t, bodySecrets: _s, userAgent: _u, sessionId: _i, replayed: _r, ...plain } = full;
  const back = tupleToRow(structuredClone(rowToTuple(plain)));
  expect(back).toEqual(plain);
  expect('requestBytes' in back || 'bodySecrets' in back || 'userAgent' in back || 'sessionId' in back || 'replayed' in back).toBe(false);
});
