/**
 * The audit writer's running retention (rows, bytes, age; the space given back once the writer is quiet), the running
 * spend totals it keeps through the trigger (not lowered by purges), and the caps on every free-text
 * field of a row. Real SQLite files.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallRow } from '../../core/storage/audit-writer.ts';
import { capCallRow, capText, MAX_ERROR_CHARS, MAX_NAME_CHARS } from '../../core/storage/field-caps.ts';
import { Store } from '../../core/storage/index.ts';

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-retention-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

let seq = 0;
function row(extra: Partial<CallRow> = {}): CallRow {
  seq += 1;
  return {
    id: `req_${String(seq).padStart(24, '0')}`,
    time: Date.now(),
    keyId: 'key_1',
    keyName: 'k',
    endpoint: 'chat',
    modelRequested: 'gpt-4o',
    model: 'gpt-4o',
    provider: 'openai',
    status: 200,
    errorType: null,
    errorMessage: null,
    stream: false,
    inputTokens: 1,
    outputTokens: 1,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.01,
    pricing: 'priced',
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

const count = (store: Store): number => (store.db.prepare('SELECT COUNT(*) AS n FROM calls').get() as { n: number }).n;
const usedBytes = (store: Store): number => {
  const pages = store.db.pragma('page_count', { simple: true }) as number;
  const free = store.db.pragma('freelist_count', { simple: true }) as number;
  return (pages - free) * (store.db.pragma('page_size', { simple: true }) as number);
};
const spent = (store: Store): number => (store.db.prepare('SELECT TOTAL(cost_usd) AS s FROM spend_daily').get() as { s: number }).s;

describe('running retention', () => {
  it('keeps the newest maxRows rows as batches are written; the spend totals keep every call', () => {
    const store = Store.open(home, { audit: { flushIntervalMs: 60_000, retention: { maxRows: 100 } } });
    const base = Date.now() - 1_000_000;
    try {
      for (let b = 0; b < 10; b++) {
        for (let i = 0; i < 50; i++) store.audit.record(row({ time: base + b * 1000 + i }));
        store.audit.flush();
        expect(count(store)).toBeLessThanOrEqual(100);
      }
      const oldest = store.db.prepare('SELECT MIN(time) AS t FROM calls').get() as { t: number };
      // The last batch and the newest of the one before (times base + 8000.. and base + 9000..).
      expect(oldest.t).toBeGreaterThanOrEqual(base + 8000);
      expect(spent(store)).toBeCloseTo(500 * 0.01, 9);
    } finally {
      store.close();
    }
  });

  it('keeps the pages under maxBytes, oldest first, and gives the space back once the writer is quiet', async () => {
    const big = 'b'.repeat(30_000);
    const store = Store.open(home, { audit: { flushIntervalMs: 60_000, maxBodyBytes: 64 * 1024, retention: { maxBytes: 2 * 1024 * 1024, checkEveryMs: 0, reclaimAfterQuietMs: 50 } } });
    try {
      for (let b = 0; b < 20; b++) {
        for (let i = 0; i < 20; i++) store.audit.record(row({ requestBody: big, responseBody: big }));
        store.audit.flush();
        expect(usedBytes(store)).toBeLessThanOrEqual(2 * 1024 * 1024);
      }
      // 400 rows of 60 KB would be 24 MB: most went, the newest stayed.
      expect(count(store)).toBeGreaterThan(5);
      expect(count(store)).toBeLessThan(100);
      // Under load the freed pages are the next rows' pages: nothing is moved or truncated between batches.
      expect(store.db.pragma('freelist_count', { simple: true })).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 300));
      expect(store.db.pragma('freelist_count', { simple: true })).toBe(0);
      const wal = statSync(path.join(home, 'gateway.db-wal'), { throwIfNoEntry: false });
      expect(wal?.size ?? 0).toBe(0);
    } finally {
      store.close();
    }
  });

  it('at its byte cap, each purge deletes only what is over it (down to 1% under), not a tenth of the table', () => {
    const body = 'c'.repeat(3_000);
    const cap = 4 * 1024 * 1024;
    const store = Store.open(home, { audit: { flushIntervalMs: 60_000, retention: { maxBytes: cap, checkEveryMs: 0, reclaimAfterQuietMs: 60_000 } } });
    try {
      let purged = 0;
      for (let b = 0; b < 120; b++) {
        const before = count(store);
        for (let i = 0; i < 20; i++) store.audit.record(row({ requestBody: body, responseBody: body }));
        store.audit.flush();
        const used = usedBytes(store);
        expect(used).toBeLessThanOrEqual(cap);
        if (count(store) < before + 20) {
          purged++;
          // A tenth of ~600 rows would have taken ~60 and left ~90% of the cap in use.
          expect(before + 20 - count(store)).toBeLessThan(25);
          expect(used).toBeGreaterThan(cap * 0.97);
        }
      }
      expect(purged).toBeGreaterThan(10);
    } finally {
      store.close();
    }
  });

  it('truncates a WAL grown past its limit once the writer is quiet, with no purge', async () => {
    const big = 'w'.repeat(30_000);
    const store = Store.open(home, { audit: { flushIntervalMs: 60_000, retention: { maxBytes: 1024 ** 3, checkEveryMs: 0, reclaimAfterQuietMs: 50, walLimitBytes: 256 * 1024 } } });
    const walSize = (): number => statSync(path.join(home, 'gateway.db-wal'), { throwIfNoEntry: false })?.size ?? 0;
    try {
      for (let i = 0; i < 40; i++) store.audit.record(row({ requestBody: big, responseBody: big }));
      store.audit.flush();
      expect(walSize()).toBeGreaterThan(256 * 1024);
      await new Promise((r) => setTimeout(r, 300));
      expect(walSize()).toBe(0);
      expect(count(store)).toBe(40);
    } finally {
      store.close();
    }
  });

  it('deletes rows older than maxAgeMs', () => {
    const store = Store.open(home, { audit: { flushIntervalMs: 60_000, retention: { maxAgeMs: 86_400_000, checkEveryMs: 0 } } });
    try {
      store.audit.record(row({ time: Date.now() - 3 * 86_400_000 }));
      store.audit.record(row());
      store.audit.flush();
      expect(count(store)).toBe(1);
    } finally {
      store.close();
    }
  });
});

describe('field caps', () => {
  it('cuts every free-text field with a marker, never a surrogate pair in half', () => {
    const huge = 'm'.repeat(40 * 1024 * 1024);
    const capped = capCallRow(row({ modelRequested: huge, model: huge, provider: huge, keyName: huge, errorType: huge, errorMessage: huge, attemptsJson: huge }));
    for (const v of [capped.modelRequested, capped.model, capped.provider, capped.keyName, capped.errorType]) {
      expect(v?.length).toBeLessThanOrEqual(MAX_NAME_CHARS);
      expect(v).toContain('…[truncated 41943040 chars]');
    }
    expect(capped.errorMessage?.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    expect(JSON.stringify(capped).length).toBeLessThan(32 * 1024);
    const emoji = '😀'.repeat(300);
    const cut = capText(emoji, 256);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(capText('short', 256)).toBe('short');
    expect(capText(null, 256)).toBeNull();
  });

  it('cuts a field that alone is over its cap, and passes a row within every cap as it is', () => {
    const fields = ['keyName', 'endpoint', 'modelRequested', 'model', 'provider', 'errorType', 'errorMessage', 'priceVersion', 'attemptsJson'] as const;
    for (const f of fields) {
      const capped = capCallRow(row({ [f]: 'x'.repeat(20_000) }));
      expect(capped[f], f).toContain('…[truncated 20000 chars]');
      expect(capped.id).toMatch(/^req_/);
    }
    const fine = row();
    expect(capCallRow(fine)).toBe(fine);
  });
});

describe('retention without any new call', () => {
  it('enforceRetention() applies age and row limits on the writer thread of an idle store', () => {
    const setup = Store.open(home);
    const day = 86_400_000;
    for (let i = 0; i < 30; i++) setup.audit.record(row({ time: Date.now() - i * day }));
    setup.close();
    const store = Store.open(home, { auditThread: true, audit: { retention: { maxAgeMs: 10 * day + 1000, maxRows: 5 } } });
    try {
      store.audit.enforceRetention?.();
      store.audit.flush();
      const rows = store.db.prepare('SELECT time FROM calls ORDER BY time DESC').all() as Array<{ time: number }>;
      expect(rows.length).toBeLessThanOrEqual(5);
      expect(rows.length).toBeGreaterThan(0);
      expect(Math.min(...rows.map((r) => r.time))).toBeGreaterThan(Date.now() - 10 * day - 1000);
    } finally {
      store.close();
    }
  });
});
