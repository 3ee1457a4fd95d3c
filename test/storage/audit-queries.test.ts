import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  getCall,
  listCalls,
  purgeCalls,
  spendForKey,
  spendForKeyBetween,
  spendTotals,
  usageSummary,
} from '../../core/storage/audit-queries.ts';
import type { CallRow } from '../../core/storage/audit-writer.ts';
import { Store } from '../../core/storage/index.ts';

let home: string;
let store: Store;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-audit-queries-'));
  store = Store.open(home, { audit: { flushIntervalMs: 60_000 } });
});
afterEach(() => {
  store.close();
  rmSync(home, { recursive: true, force: true });
});

let seq = 0;
function row(extra: Partial<CallRow> = {}): CallRow {
  seq += 1;
  return {
    id: `req_${String(seq).padStart(24, '0')}`,
    time: Date.now(),
    keyId: null,
    keyName: null,
    endpoint: '/v1/chat/completions',
    modelRequested: 'gpt-4o',
    model: 'gpt-4o',
    provider: 'openai',
    status: 200,
    errorType: null,
    errorMessage: null,
    stream: false,
    inputTokens: 0,
    outputTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: null,
    pricing: 'unpriced',
    priceVersion: null,
    latencyMs: 10,
    ttftMs: null,
    attempts: 1,
    attemptsJson: '[]',
    requestBody: 'req',
    responseBody: 'res',
    ...extra,
  };
}

const day = (y: number, m: number, d: number, h = 12, min = 0): number => new Date(y, m - 1, d, h, min).getTime();

function seed(): { editor: string; agent: string; oldId: string } {
  const editor = store.keys.create({ name: 'editor' }).key.id;
  const agent = store.keys.create({ name: 'agent' }).key.id;
  const old = store.keys.create({ name: 'old' }).key.id;
  store.keys.delete('old');
  const rows: CallRow[] = [
    row({ time: day(2025, 1, 10), keyId: editor, keyName: 'editor', model: 'gpt-4o', provider: 'openai', inputTokens: 100, outputTokens: 50, cachedTokens: 20, reasoningTokens: 5, costUsd: 0.5, pricing: 'priced' }),
    row({ time: day(2025, 1, 10, 23, 30), keyId: editor, keyName: 'editor', model: 'claude-sonnet', provider: 'anthropic', inputTokens: 10, outputTokens: 10, costUsd: 2, pricing: 'priced' }),
    row({ time: day(2025, 1, 11, 0, 30), keyId: agent, keyName: 'agent', model: 'gpt-4o', provider: 'openrouter', inputTokens: 1, outputTokens: 1, costUsd: 0.25, pricing: 'estimated' }),
    row({ time: day(2025, 1, 11), keyId: agent, keyName: 'agent', model: 'mystery', provider: 'local', inputTokens: 7, costUsd: null, pricing: 'unpriced' }),
    row({ time: day(2025, 1, 12), keyId: agent, keyName: 'agent', model: null, modelRequested: 'nope', provider: null, status: 404, errorType: 'invalid_request_error', attempts: 0 }),
    row({ time: day(2025, 1, 12, 13), keyId: old, keyName: 'old', model: 'gpt-4o', provider: 'openai', costUsd: 0.1, pricing: 'priced' }),
    row({ time: day(2025, 1, 12, 14), status: 401, errorType: 'invalid_api_key', model: null, modelRequested: null, provider: null, attempts: 0 }),
  ];
  for (const r of rows) store.audit.record(r);
  store.audit.flush();
  return { editor, agent, oldId: old };
}

describe('listCalls and getCall', () => {
  it('lists newest first, without bodies, with filters and paging', () => {
    seed();
    const all = listCalls(store.db, { limit: 100 });
    expect(all).toHaveLength(7);
    expect(all.map((c) => c.time)).toEqual([...all.map((c) => c.time)].sort((a, b) => b - a));
    expect(all[0]).not.toHaveProperty('requestBody');
    expect(all[0]).toMatchObject({ status: 401, keyId: null, attemptList: [] });

    expect(listCalls(store.db, { limit: 2 }).map((c) => c.time)).toEqual(all.slice(0, 2).map((c) => c.time));
    const page2 = listCalls(store.db, { limit: 2, beforeTime: all[1].time });
    expect(page2.map((c) => c.id)).toEqual(all.slice(2, 4).map((c) => c.id));
    expect(listCalls(store.db, { limit: 100, keyName: 'agent' })).toHaveLength(3);
    expect(listCalls(store.db, { limit: 100, sinceTime: day(2025, 1, 12, 0, 0) })).toHaveLength(3);
  });

  it('keeps insertion order for calls in the same millisecond', () => {
    const t = day(2025, 2, 1);
    const ids = [row({ time: t }), row({ time: t }), row({ time: t })].map((r) => {
      store.audit.record(r);
      return r.id;
    });
    store.audit.flush();
    expect(listCalls(store.db, { limit: 10 }).map((c) => c.id)).toEqual(ids.reverse());
  });

  it('gets one call with its bodies', () => {
    const r = row({ attemptsJson: JSON.stringify([{ provider: 'a', model: 'm', status: 503, error: 'down', duration_ms: 4 }, { provider: 'b', model: 'm', status: 200, error: null, duration_ms: 9 }]), attempts: 2 });
    store.audit.record(r);
    store.audit.flush();
    expect(getCall(store.db, r.id)).toMatchObject({
      id: r.id,
      requestBody: 'req',
      responseBody: 'res',
      attempts: 2,
      attemptList: [
        { provider: 'a', model: 'm', status: 503, error: 'down', durationMs: 4 },
        { provider: 'b', model: 'm', status: 200, error: null, durationMs: 9 },
      ],
    });
    expect(getCall(store.db, 'req_missing')).toBeNull();
  });
});

describe('usageSummary', () => {
  it('groups by key, naming deleted keys and calls without a key, ordered by cost', () => {
    seed();
    const rows = usageSummary(store.db, { by: 'key' });
    expect(rows.map((r) => r.group)).toEqual(['editor', 'agent', 'old (deleted)', '(no key)']);
    expect(rows[0]).toEqual({
      group: 'editor',
      requests: 2,
      input_tokens: 110,
      output_tokens: 60,
      cached_tokens: 20,
      cache_write_tokens: 0,
      reasoning_tokens: 5,
      cost_usd: 2.5,
      errors: 0,
      unpriced: 0,
    });
    // Only the call a provider served without a price is unpriced; the 404 never reached one.
    expect(rows[1]).toMatchObject({ group: 'agent', requests: 3, cost_usd: 0.25, errors: 1, unpriced: 1 });
    expect(rows[3]).toMatchObject({ group: '(no key)', requests: 1, cost_usd: 0, errors: 1 });
  });

  it('keeps a deleted key apart from a new key that reuses its name', () => {
    seed();
    const reborn = store.keys.create({ name: 'old' }).key.id;
    store.audit.record(row({ keyId: reborn, keyName: 'old', costUsd: 0.01, pricing: 'priced' }));
    store.audit.flush();
    const groups = usageSummary(store.db, { by: 'key' }).map((r) => r.group);
    expect(groups).toContain('old');
    expect(groups).toContain('old (deleted)');
  });

  it('groups by model and by provider', () => {
    seed();
    const byModel = usageSummary(store.db, { by: 'model' });
    expect(byModel.map((r) => [r.group, r.requests, r.cost_usd])).toEqual([
      ['claude-sonnet', 1, 2],
      ['gpt-4o', 3, 0.85],
      ['(none)', 1, 0], // the 401: neither requested nor resolved model
      ['mystery', 1, 0],
      ['nope', 1, 0],
    ]);
    const byProvider = usageSummary(store.db, { by: 'provider' });
    expect(byProvider.map((r) => r.group)).toEqual(['anthropic', 'openai', 'openrouter', '(none)', 'local']);
    expect(byProvider.find((r) => r.group === '(none)')).toMatchObject({ requests: 2, errors: 2 });
  });

  it('groups by local day, oldest first, and honours since', () => {
    seed();
    const byDay = usageSummary(store.db, { by: 'day' });
    expect(byDay.map((r) => [r.group, r.requests])).toEqual([
      ['2025-01-10', 2],
      ['2025-01-11', 2],
      ['2025-01-12', 3],
    ]);
    expect(byDay[0].cost_usd).toBe(2.5);
    const since = usageSummary(store.db, { by: 'day', since: day(2025, 1, 11, 0, 0) });
    expect(since.map((r) => r.group)).toEqual(['2025-01-11', '2025-01-12']);
    expect(usageSummary(store.db, { by: 'day', since: day(2030, 1, 1) })).toEqual([]);
  });
});

describe('spend', () => {
  it('sums a key\'s cost, optionally since a time or within a range', () => {
    const { editor, agent } = seed();
    expect(spendForKey(store.db, editor)).toBe(2.5);
    expect(spendForKey(store.db, editor, day(2025, 1, 10, 20))).toBe(2);
    expect(spendForKey(store.db, agent)).toBe(0.25);
    expect(spendForKey(store.db, 'key_unknown')).toBe(0);
    expect(spendForKeyBetween(store.db, editor, day(2025, 1, 10, 0), day(2025, 1, 10, 13))).toBe(0.5);
  });

  it('totals today and this month across keys', () => {
    seed();
    expect(spendTotals(store.db, { todayStartMs: day(2025, 1, 12, 0, 0), monthStartMs: day(2025, 1, 1, 0, 0) })).toEqual({
      todayUsd: 0.1,
      monthUsd: 2.85,
    });
    expect(spendTotals(store.db, { todayStartMs: day(2030, 1, 1), monthStartMs: day(2030, 1, 1) })).toEqual({ todayUsd: 0, monthUsd: 0 });
  });
});

describe('purgeCalls', () => {
  it('deletes by age', () => {
    seed();
    const now = day(2025, 1, 12, 12, 0);
    expect(purgeCalls(store.db, { olderThanMs: 24 * 3600_000, now })).toBe(3); // before Jan 11 noon
    expect(listCalls(store.db, { limit: 100 })).toHaveLength(4);
    expect(purgeCalls(store.db, { beforeTime: day(2025, 1, 12, 0, 0) })).toBe(1);
    expect(purgeCalls(store.db, { beforeTime: day(2025, 1, 12, 0, 0) })).toBe(0);
  });

  it('keeps only the newest N rows, in chunks, and returns the space', () => {
    const t0 = day(2025, 3, 1);
    for (let i = 0; i < 12_000; i++) store.audit.record(row({ time: t0 + i, requestBody: 'x'.repeat(200) }));
    store.audit.flush();
    expect(purgeCalls(store.db, { keepMaxRows: 1000 })).toBe(11_000);
    const left = listCalls(store.db, { limit: 20_000 });
    expect(left).toHaveLength(1000);
    expect(left[left.length - 1].time).toBe(t0 + 11_000);
    expect(store.db.pragma('freelist_count', { simple: true })).toBe(0);
    expect(purgeCalls(store.db, { keepMaxRows: 1000 })).toBe(0);
    expect(purgeCalls(store.db, { keepMaxRows: 0 })).toBe(1000);
  });
});
