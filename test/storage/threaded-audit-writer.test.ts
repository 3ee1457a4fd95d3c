import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { CallRow } from '../../core/storage/audit-writer.ts';
import { rowToTuple } from '../../core/storage/call-row-tuple.ts';
import { Store } from '../../core/storage/index.ts';

let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gw-threaded-audit-'));
  store = Store.open(dir, { auditThread: true });
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
const row = (): CallRow => ({
  id: `req_thread${String(++n).padStart(16, '0')}`,
  time: Date.now(),
  keyId: null,
  keyName: null,
  endpoint: '/v1/chat/completions',
  modelRequested: 'm',
  model: 'm',
  provider: 'p',
  status: 200,
  errorType: null,
  errorMessage: null,
  stream: false,
  inputTokens: 3,
  outputTokens: 4,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  costUsd: 0.001,
  pricing: 'priced',
  priceVersion: 'v',
  latencyMs: 5,
  ttftMs: null,
  attempts: 1,
  attemptsJson: '[]',
  requestBody: 'x'.repeat(70 * 1024),
  responseBody: '{}',
});

const count = () => (store.db.prepare('SELECT count(*) AS n FROM calls').get() as { n: number }).n;
const storedIds = () => new Set((store.db.prepare('SELECT id FROM calls').all() as { id: string }[]).map((r) => r.id));
const idsOf = (rows: CallRow[]) => new Set(rows.map((r) => r.id));
const auditWorker = () => Reflect.get(store.audit, 'worker') as import('node:worker_threads').Worker;

/** Runs `body` with the process warnings it emits collected. */
async function withWarnings(body: (warnings: string[]) => Promise<void>): Promise<void> {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    await body(warnings);
  } finally {
    process.off('warning', onWarning);
  }
}

it('writes on the worker thread; flush() is synchronous and reports what it wrote', () => {
  const seen: string[] = [];
  store.audit.onRow((r) => seen.push(r.id));
  for (let i = 0; i < 25; i++) store.audit.record(row());
  expect(seen).toHaveLength(25);
  expect(store.audit.flush()).toBe(25);
  expect(count()).toBe(25);
  // The worker applies the same 64 KiB body cap.
  const body = store.db.prepare('SELECT request_body FROM calls LIMIT 1').get() as { request_body: string };
  expect(Buffer.byteLength(body.request_body)).toBeLessThanOrEqual(64 * 1024);
});

it('flushes on its own within the interval, and close() writes what is left', async () => {
  store.audit.record(row());
  const deadline = Date.now() + 3_000;
  while (count() < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(count()).toBe(1);
  store.audit.record(row());
  store.audit.close();
  const again = Store.open(dir);
  try {
    expect((again.db.prepare('SELECT count(*) AS n FROM calls').get() as { n: number }).n).toBe(2);
  } finally {
    again.close();
  }
});

it('flushAsync() makes every recorded row visible while this thread keeps turning', async () => {
  for (let i = 0; i < 2000; i++) store.audit.record(row());
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  try {
    expect(await store.audit.flushAsync?.()).toBe(2000);
  } finally {
    clearInterval(timer);
  }
  expect(count()).toBe(2000);
  // The writer needed time for 2000 rows with 64 KiB bodies; the wait did not hold this thread meanwhile.
  expect(ticks).toBeGreaterThan(0);
});

it('raw bodies (bodySecrets set) are cut and scrubbed on the worker: the secrets and key-shaped text never reach the table', () => {
  const secret = 'upstream-secret-abcdef123456';
  const keyShaped = `sk-${'A'.repeat(40)}`;
  const big = `${'y'.repeat(80 * 1024)} ${secret}`;
  store.audit.record({ ...row(), id: 'req_rawbodies0000000001', requestBody: `{"content":"use ${secret} and ${keyShaped}"}`, responseBody: big, bodySecrets: [secret] });
  store.audit.flush();
  const stored = store.db.prepare('SELECT request_body AS q, response_body AS r FROM calls WHERE id = ?').get('req_rawbodies0000000001') as { q: string; r: string };
  expect(stored.q).toBe('{"content":"use [redacted] and [redacted]"}');
  expect(stored.r).not.toContain(secret);
  expect(stored.r).toMatch(/…\[truncated \d+ bytes\]$/);
  expect(Buffer.byteLength(stored.r)).toBeLessThanOrEqual(64 * 1024);
});

it("a row's body bytes are moved to the worker, not copied: stored whole, seen intact by listeners, empty here after the hand-over", () => {
  const text = `{"content":"${'é'.repeat(20 * 1024)}"}`;
  const bytes = () => new Uint8Array(Buffer.from(text));
  const seen: number[] = [];
  store.audit.onRow((r) => seen.push(r.requestBytes?.byteLength ?? -1));
  // 256 rows make a full batch, posted inside record(): the listener of the last one still runs before it.
  const rows = Array.from({ length: 256 }, () => ({ ...row(), requestBody: null, requestBytes: bytes() }));
  // Two rows with the same view: its buffer goes once (twice would make postMessage throw), both are stored.
  const shared = bytes();
  rows.push({ ...row(), requestBody: null, requestBytes: shared }, { ...row(), requestBody: null, requestBytes: shared });
  for (const r of rows) store.audit.record(r);
  expect(seen).toEqual(rows.map(() => Buffer.byteLength(text)));
  expect(store.audit.flush()).toBe(rows.length);
  expect(rows.every((r) => r.requestBytes?.byteLength === 0)).toBe(true);
  const stored = store.db.prepare('SELECT DISTINCT request_body AS q FROM calls').all() as { q: string }[];
  expect(stored).toEqual([{ q: text }]);
});

it('a worker that exits without an error event hands the writing to this thread: later rows are still stored', () =>
  withWarnings(async (warnings) => {
    const first = Array.from({ length: 30 }, () => row());
    for (const r of first) store.audit.record(r);
    expect(store.audit.flush()).toBe(30);
    await auditWorker().terminate();
    await new Promise((r) => setTimeout(r, 20));
    const later = Array.from({ length: 5 }, () => row());
    for (const r of later) store.audit.record(r);
    expect(store.audit.flush()).toBe(5);
    expect(storedIds()).toEqual(idsOf([...first, ...later]));
    expect(warnings.some((w) => /audit worker failed .*exited/.test(w))).toBe(true);
  }));

it('a worker that fails hands back the rows it had queued and not written: the request thread writes them, none is lost', () =>
  withWarnings(async (warnings) => {
    const first = Array.from({ length: 10 }, () => row());
    for (const r of first) store.audit.record(r);
    expect(store.audit.flush()).toBe(10);
    // Recorded right after a write, these wait on the worker for its next interval (200 ms).
    const queued = Array.from({ length: 5 }, () => row());
    for (const r of queued) store.audit.record(r);
    await new Promise((r) => setTimeout(r, 50));
    expect(count()).toBe(10);
    const worker = auditWorker();
    const exited = new Promise((r) => worker.once('exit', r));
    // A message the thread cannot read: the exception escapes its handler, as a bug there would.
    worker.postMessage({ type: 'rows', rows: null });
    expect(await exited).toBe(1);
    const later = Array.from({ length: 3 }, () => row());
    for (const r of later) store.audit.record(r);
    expect(store.audit.flush()).toBe(8);
    expect(storedIds()).toEqual(idsOf([...first, ...queued, ...later]));
    expect(warnings.some((w) => /5 unwritten rows handed back/.test(w))).toBe(true);
  }));

it('a worker that fails with batches posted to it and not yet read hands those back too, and a flush waiting on it returns at once', () =>
  withWarnings(async (warnings) => {
    const first = Array.from({ length: 4 }, () => row());
    for (const r of first) store.audit.record(r);
    expect(store.audit.flush()).toBe(4);
    const worker = auditWorker();
    const exited = new Promise((r) => worker.once('exit', r));
    // Still on this thread (the hand-over waits a few ms): the flush below posts them right behind the poison.
    const posted = Array.from({ length: 6 }, () => row());
    for (const r of posted) store.audit.record(r);
    worker.postMessage({ type: 'rows', rows: null });
    const started = Date.now();
    expect(store.audit.flush()).toBe(6);
    // The thread's failure wakes the wait (it gave up only after 10 s before).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await exited).toBe(1);
    expect(storedIds()).toEqual(idsOf([...first, ...posted]));
    expect(warnings.some((w) => /6 unwritten rows handed back/.test(w))).toBe(true);
  }));

it('a worker that fails while the writer closes: the rows it had are written on this thread before the close returns', () =>
  withWarnings(async () => {
    const first = row();
    store.audit.record(first);
    expect(store.audit.flush()).toBe(1);
    const rows = Array.from({ length: 3 }, () => row());
    for (const r of rows) store.audit.record(r);
    auditWorker().postMessage({ type: 'rows', rows: null });
    store.audit.close();
    expect(storedIds()).toEqual(idsOf([first, ...rows]));
  }));

it('a row the worker cannot read is reported and the rest of its batch is still written', async () => {
  const errors: string[] = [];
  store.close();
  store = Store.open(dir, { auditThread: true, audit: { onError: (e) => errors.push(String(e)) } });
  const good = Array.from({ length: 3 }, () => row());
  store.audit.record(good[0]);
  expect(store.audit.flush()).toBe(1);
  auditWorker().postMessage({ type: 'rows', rows: [good[1], null, good[2]].map((r) => (r ? rowToTuple(r) : null)) });
  await new Promise((r) => setTimeout(r, 50));
  expect(store.audit.flush()).toBe(2);
  expect(count()).toBe(3);
  expect(errors).toEqual([expect.stringMatching(/an audit row could not be read/)]);
});

it('a row whose pricing the schema does not allow is refused on the worker (its connection skips CHECK constraints) and the rest of its batch is written', async () => {
  const errors: string[] = [];
  store.close();
  store = Store.open(dir, { auditThread: true, audit: { onError: (e) => errors.push(String(e)) } });
  const good = Array.from({ length: 2 }, () => row());
  const bad = { ...row(), pricing: 'free' as CallRow['pricing'] };
  for (const r of [good[0], bad, good[1]]) store.audit.record(r);
  store.audit.flush();
  expect(storedIds()).toEqual(idsOf(good));
  // The worker's report comes as a message: this thread reads it once it turns.
  await vi.waitFor(() => expect(errors).toHaveLength(1));
  expect(errors).toEqual([expect.stringMatching(new RegExp(`call ${bad.id}: pricing "free" is not one of priced, estimated, unpriced`))]);
  // The request thread's own connection still enforces the schema's CHECK constraints.
  expect(() => store.db.prepare("INSERT INTO calls (id, time, endpoint, status, pricing, latency_ms) VALUES ('req_x', 1, '/', 200, 'free', 1)").run()).toThrow(/CHECK constraint failed/);
});
