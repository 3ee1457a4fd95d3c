import { describe, expect, it } from 'vitest';
import { formatCallLine, formatRowLine, rowLinePieces } from '../../cli/commands/logs.ts';
import { callToJson } from '../../core/call-json.ts';
import type { CallRow } from '../../core/storage/call-row.ts';

const base: CallRow = {
  id: 'req_019b2a4c3d5e0123456789ab',
  time: Date.UTC(2026, 10, 24, 10, 24, 53, 417),
  keyId: 'key_1',
  keyName: 'aider',
  endpoint: '/v1/chat/completions',
  modelRequested: 'fast',
  model: 'gpt-4o-mini',
  provider: 'openai',
  status: 200,
  errorType: null,
  errorMessage: null,
  stream: false,
  inputTokens: 180,
  outputTokens: 64,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  costUsd: 0.00109,
  pricing: 'priced',
  priceVersion: 'builtin+2026-11-01',
  latencyMs: 312,
  ttftMs: null,
  attempts: 1,
  attemptsJson: '[]',
  requestBody: null,
  responseBody: null,
};

describe('the per-call line of gateway start', () => {
  // `gateway start` formats the row itself; `gateway logs` formats the row's JSON: both must print the same line.
  it.each([
    ['a priced call', {}],
    ['a stream with an estimated cost', { stream: true, pricing: 'estimated' as const, ttftMs: 40 }],
    ['an unpriced call', { costUsd: null, pricing: 'unpriced' as const }],
    ['a refused call (no key, no provider)', { keyName: null, keyId: null, provider: null, model: null, costUsd: null, status: 401, errorType: 'authentication_error', errorMessage: 'Incorrect API key provided' }],
    ['a provider error', { status: 502, costUsd: null, errorType: 'api_error', errorMessage: 'upstream failed', attempts: 3 }],
    ['a replayed call', { replayed: true, costUsd: 0 }],
    ['a call without a requested model', { modelRequested: null }],
  ])('%s', (_name, change) => {
    const row: CallRow = { ...base, ...change };
    const line = formatRowLine(row);
    expect(line).toBe(formatCallLine(callToJson(row)));
    // `gateway start` writes it in pieces: only a `→` of its own may be beyond Latin-1.
    const pieces = rowLinePieces(row);
    expect(pieces.join('')).toBe(line);
    expect(pieces.filter((p) => /[^\x00-\xff]/.test(p))).toEqual(row.provider ? [' → '] : []);
    expect(line).toContain(row.id);
  });

  it('shows the time in the local zone, to the second, and notices the next second', () => {
    const d = new Date(base.time);
    const pad = (n: number) => String(n).padStart(2, '0');
    const local = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    expect(formatRowLine(base).startsWith(`${local} 200 aider fast → openai/gpt-4o-mini in=180 out=64 $`)).toBe(true);
    const next = formatRowLine({ ...base, time: base.time + 1000 });
    expect(next.slice(0, 19)).not.toBe(local);
    expect(formatRowLine({ ...base, time: base.time + 1 }).slice(0, 19)).toBe(local);
  });
});
