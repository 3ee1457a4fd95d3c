/**
 * The cheap question a start asks before it wakes the audit thread for retention: never "no" when a purge
 * would delete something, and "no" for a table within every limit (so an idle gateway keeps no thread).
 */
import { describe, expect, it } from 'vitest';
import { Retention, retentionDue } from '../../core/storage/retention.ts';
import type { RetentionOptions } from '../../core/storage/retention.ts';
import { tempStorePerTest } from '../support/temp-store.ts';

const store = tempStorePerTest('gw-retention-due-');

const now = Date.now();
function insert(times: number[], bodyBytes = 10): void {
  const ins = store().db.prepare(
    `INSERT INTO calls (id, time, endpoint, status, pricing, latency_ms, request_body) VALUES (?, ?, 'chat', 200, 'unpriced', 5, ?)`,
  );
  store().db.transaction(() => {
    times.forEach((t, i) => ins.run(`r${t}_${i}_${Math.random()}`, t, 'x'.repeat(bodyBytes)));
  })();
}

/** What a real purge deletes, on a copy of the rules: the oracle. */
const purged = (options: RetentionOptions): number => new Retention(store().db, options).enforce(now);

describe('retentionDue', () => {
  it('an empty table, or one within every limit: nothing is due', () => {
    expect(retentionDue(store().db, { maxRows: 10, maxAgeMs: 86_400_000, maxBytes: 50_000_000 }, now)).toBe(false);
    insert([now - 1000, now - 500, now]);
    expect(retentionDue(store().db, { maxRows: 10, maxAgeMs: 86_400_000, maxBytes: 50_000_000 }, now)).toBe(false);
    expect(purged({ maxRows: 10, maxAgeMs: 86_400_000, maxBytes: 50_000_000 })).toBe(0);
  });

  it('a row older than the age limit is due, and a purge deletes it', () => {
    insert([now - 3 * 86_400_000, now]);
    expect(retentionDue(store().db, { maxAgeMs: 86_400_000 }, now)).toBe(true);
    expect(purged({ maxAgeMs: 86_400_000 })).toBe(1);
    expect(retentionDue(store().db, { maxAgeMs: 86_400_000 }, now)).toBe(false);
  });

  it('more rows than the cap is due, even when the table had deletions in its middle', () => {
    insert(Array.from({ length: 30 }, (_, i) => now - i));
    store().db.prepare('DELETE FROM calls WHERE rowid BETWEEN 5 AND 9').run();
    expect(retentionDue(store().db, { maxRows: 20 }, now)).toBe(true);
    expect(purged({ maxRows: 20 })).toBeGreaterThan(0);
  });

  it('a file over the byte limit is due', () => {
    insert(Array.from({ length: 50 }, (_, i) => now - i), 20_000);
    expect(retentionDue(store().db, { maxBytes: 100_000 }, now)).toBe(true);
    expect(retentionDue(store().db, { maxBytes: 500_000_000 }, now)).toBe(false);
  });
});
