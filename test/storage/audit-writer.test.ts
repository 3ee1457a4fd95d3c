import BetterSqlite3 from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditWriter, MAX_BODY_BYTES, truncateBody, type CallRow } from '../../core/storage/audit-writer.ts';
import { getCall } from '../../core/storage/audit-queries.ts';
import { openDatabase, type Database } from '../../core/storage/db.ts';

let dir: string;
let file: string;
let db: Database;
let reader: Database;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gw-audit-writer-'));
  file = path.join(dir, 'gateway.db');
  db = openDatabase(file);
  reader = openDatabase(file);
});
afterEach(() => {
  reader.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

let seq = 0;
function row(extra: Partial<CallRow> = {}): CallRow {
  seq += 1;
  return {
    id: `req_${String(seq).padStart(24, '0')}`,
    time: Date.now(),
    keyId: 'key_1',
    keyName: 'editor',
    endpoint: '/v1/chat/completions',
    modelRequested: 'gpt-4o',
    model: 'gpt-4o-2024-08-06',
    provider: 'openai',
    status: 200,
    errorType: null,
    errorMessage: null,
    stream: false,
    inputTokens: 10,
    outputTokens: 5,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.0001,
    pricing: 'priced',
    priceVersion: '0.1.8',
    latencyMs: 12,
    ttftMs: null,
    attempts: 1,
    attemptsJson: JSON.stringify([{ provider: 'openai', model: 'gpt-4o-2024-08-06', status: 200, error: null, duration_ms: 11 }]),
    requestBody: '{"model":"gpt-4o"}',
    responseBody: '{"id":"chatcmpl-1"}',
    ...extra,
  };
}

const runningTotals = (): { daily: number; hourly: number; cost: number } => ({
  daily: reader.prepare<[], number>(`SELECT TOTAL(requests) FROM spend_daily`).pluck().get() ?? 0,
  hourly: reader.prepare<[], number>(`SELECT TOTAL(requests) FROM usage_hourly`).pluck().get() ?? 0,
  cost: reader.prepare<[], number>(`SELECT TOTAL(cost_usd) FROM spend_daily`).pluck().get() ?? 0,
});
const countRows = (conn: Database = reader): number => conn.prepare<[], number>(`SELECT COUNT(*) FROM calls`).pluck().get() ?? 0;

/** Commits in the current WAL generation: frames whose "db size after commit" field is set. */
function walCommits(): number {
  const wal = `${file}-wal`;
  if (!existsSync(wal)) return 0;
  const bytes = readFileSync(wal);
  if (bytes.length < 32) return 0;
  const pageSize = bytes.readUInt32BE(8);
  const salt1 = bytes.readUInt32BE(16);
  const salt2 = bytes.readUInt32BE(20);
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= bytes.length; at += 24 + pageSize) {
    if (bytes.readUInt32BE(at + 8) !== salt1 || bytes.readUInt32BE(at + 12) !== salt2) break;
    if (bytes.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

describe('AuditWriter', () => {
  it('queues without writing; rows appear (to another connection) only after flush', () => {
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000 });
    const r = row();
    writer.record(r);
    writer.record(row());
    expect(countRows()).toBe(0);
    expect(writer.stats().queued).toBe(2);
    expect(writer.flush()).toBe(2);
    expect(countRows()).toBe(2);
    expect(getCall(reader, r.id)).toMatchObject({
      id: r.id,
      keyName: 'editor',
      stream: false,
      costUsd: 0.0001,
      attemptList: [{ provider: 'openai', model: 'gpt-4o-2024-08-06', status: 200, error: null, durationMs: 11 }],
      requestBody: r.requestBody,
      responseBody: r.responseBody,
    });
    writer.close();
  });

  it('flushes on its own within the interval', async () => {
    const writer = new AuditWriter(db, { flushIntervalMs: 50 });
    writer.record(row());
    expect(countRows()).toBe(0);
    await vi.waitFor(() => expect(countRows()).toBe(1), { timeout: 1000, interval: 10 });
    writer.record(row());
    await vi.waitFor(() => expect(countRows()).toBe(2), { timeout: 1000, interval: 10 });
    writer.close();
  });

  it('writes one transaction per batch of maxBatch rows', () => {
    db.pragma('wal_autocheckpoint = 0'); // keep every commit in the WAL so they can be counted
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, maxBatch: 100 });
    const before = walCommits();
    for (let i = 0; i < 250; i++) writer.record(row());
    expect(writer.flush()).toBe(250);
    expect(walCommits() - before).toBe(3);
    expect(writer.stats()).toMatchObject({ queued: 0, written: 250, transactions: 3, dropped: 0 });
    expect(countRows()).toBe(250);
    writer.close();
  });

  it('writes a full batch soon, without waiting for the interval', async () => {
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, maxBatch: 10 });
    for (let i = 0; i < 10; i++) writer.record(row());
    expect(countRows()).toBe(0); // still not on the caller's path
    await vi.waitFor(() => expect(countRows()).toBe(10), { timeout: 1000, interval: 5 });
    writer.close();
  });

  it('close() writes everything queued; later rows are dropped, not thrown', () => {
    const onError = vi.fn();
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, onError });
    for (let i = 0; i < 5; i++) writer.record(row());
    writer.close();
    expect(countRows()).toBe(5);
    expect(() => writer.record(row())).not.toThrow();
    expect(writer.stats().dropped).toBe(1);
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('caps bodies at 64 KiB and says how much was cut', () => {
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000 });
    const big = 'a'.repeat(100 * 1024);
    const exact = 'b'.repeat(MAX_BODY_BYTES);
    const r = row({ requestBody: big, responseBody: exact });
    writer.record(r);
    writer.flush();
    const stored = getCall(reader, r.id);
    const request = stored?.requestBody ?? '';
    expect(Buffer.byteLength(request)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    const match = /…\[truncated (\d+) bytes\]$/.exec(request);
    expect(match).not.toBeNull();
    const kept = request.slice(0, match?.index);
    expect(kept).toBe('a'.repeat(kept.length));
    expect(kept.length + Number(match?.[1])).toBe(big.length);
    expect(stored?.responseBody).toBe(exact);
    writer.close();
  });

  it('never splits a multi-byte character when truncating', () => {
    const body = '€'.repeat(40_000); // 3 bytes each: 120,000 bytes
    const out = truncateBody(body) ?? '';
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(out).not.toContain('\uFFFD');
    const match = /…\[truncated (\d+) bytes\]$/.exec(out);
    const kept = out.slice(0, match?.index);
    expect(kept).toBe('€'.repeat(kept.length));
    expect(Buffer.byteLength(kept) + Number(match?.[1])).toBe(120_000);
    expect(truncateBody('small')).toBe('small');
    expect(truncateBody(null)).toBeNull();
    const emoji = truncateBody('😀'.repeat(20_000)) ?? ''; // surrogate pairs, 4 bytes each
    expect(emoji).not.toContain('\uFFFD');
  });

  it('tells listeners about each row as it is queued; unsubscribe and failing listeners are safe', () => {
    const onError = vi.fn();
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, onError });
    const seen: string[] = [];
    const off = writer.onRow((r) => seen.push(r.id));
    writer.onRow(() => {
      throw new Error('listener bug');
    });
    const a = row();
    writer.record(a);
    expect(seen).toEqual([a.id]);
    off();
    writer.record(row());
    expect(seen).toEqual([a.id]);
    expect(onError).toHaveBeenCalledTimes(2);
    expect(writer.flush()).toBe(2);
    writer.close();
  });

  it('a row the database refuses does not take its batch down', () => {
    const onError = vi.fn();
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, onError });
    const dup = row();
    writer.record(dup);
    writer.record(row());
    writer.record({ ...dup }); // same id: primary key conflict
    writer.record(row());
    expect(writer.flush()).toBe(3);
    expect(countRows()).toBe(3);
    expect(writer.stats().dropped).toBe(1);
    expect(onError).toHaveBeenCalledTimes(1);
    writer.close();
    // The running totals count the three stored calls once each: not the refused one, not the rolled-back batch.
    expect(runningTotals()).toEqual({ daily: 3, hourly: 3, cost: 3 * (row().costUsd ?? 0) });
  });

  it('keeps the running totals per day and hour equal to the stored calls, across batches and retries', () => {
    const onError = vi.fn();
    db.pragma('busy_timeout = 20');
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, maxBatch: 3, onError });
    const other = new BetterSqlite3(file);
    other.exec('BEGIN IMMEDIATE');
    for (let i = 0; i < 5; i++) writer.record(row({ costUsd: 0.25, inputTokens: 10 }));
    expect(writer.flush()).toBe(0); // locked: nothing written, nothing counted
    other.exec('COMMIT');
    other.close();
    writer.record(row({ costUsd: Number.NaN, pricing: 'unpriced' }));
    expect(writer.flush()).toBe(6);
    writer.close();
    expect(runningTotals()).toEqual({ daily: 6, hourly: 6, cost: 1.25 });
    expect(reader.prepare(`SELECT SUM(input_tokens) AS t, SUM(unpriced) AS u FROM usage_hourly`).get()).toEqual({ t: 50 + row().inputTokens, u: 1 });
  });

  it('keeps rows queued while another connection holds the write lock, and writes them later', () => {
    const onError = vi.fn();
    db.pragma('busy_timeout = 20'); // do not wait the full 5 s in a test
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, onError });
    const other = new BetterSqlite3(file);
    other.exec('BEGIN IMMEDIATE');
    writer.record(row());
    writer.record(row());
    expect(writer.flush()).toBe(0);
    expect(writer.stats().queued).toBe(2);
    expect(onError).toHaveBeenCalledTimes(1);
    expect((onError.mock.calls[0][0] as { code: string }).code).toMatch(/^SQLITE_BUSY/);
    other.exec('COMMIT');
    other.close();
    expect(writer.flush()).toBe(2);
    expect(countRows()).toBe(2);
    writer.close();
  });

  it('releaseRequestBytes: frees a row\'s request bytes once it is written or refused, and never before (a locked batch keeps them for its retry)', () => {
    const onError = vi.fn();
    db.pragma('busy_timeout = 20');
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000, onError, releaseRequestBytes: true });
    const body = (tag: string) => new Uint8Array(Buffer.from(`{"model":"gpt-4o","tag":"${tag}","pad":"${'x'.repeat(100)}"}`));
    const first = row({ requestBody: null, requestBytes: body('a') });
    const other = new BetterSqlite3(file);
    other.exec('BEGIN IMMEDIATE');
    writer.record(first);
    expect(writer.flush()).toBe(0);
    // Still queued for the retry: its bytes are whole.
    expect(first.requestBytes?.byteLength).toBeGreaterThan(100);
    other.exec('COMMIT');
    other.close();
    const dup = row({ id: first.id, requestBody: null, requestBytes: body('dup') });
    writer.record(dup);
    expect(writer.flush()).toBe(1);
    // Written (the first), refused for good (the duplicate id): both freed.
    expect(first.requestBytes?.buffer.byteLength).toBe(0);
    expect(dup.requestBytes?.buffer.byteLength).toBe(0);
    expect(getCall(reader, first.id)?.requestBody).toContain('"tag":"a"');
    writer.close();
    // Without the option the caller's bytes are left alone.
    const plain = new AuditWriter(db, { flushIntervalMs: 60_000 });
    const kept = row({ requestBody: null, requestBytes: body('b') });
    plain.record(kept);
    expect(plain.flush()).toBe(1);
    expect(kept.requestBytes?.byteLength).toBeGreaterThan(100);
    plain.close();
  });

  it('stores integers in integer columns even when given fractions', () => {
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000 });
    const r = row({ latencyMs: 12.6, ttftMs: 3.2, stream: true, costUsd: Number.NaN });
    writer.record(r);
    writer.close();
    expect(getCall(reader, r.id)).toMatchObject({ latencyMs: 13, ttftMs: 3, stream: true, costUsd: null });
  });
});
