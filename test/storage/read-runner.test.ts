/**
 * The dashboards' heavier reads run on a worker thread with its own connection: same answers as on the
 * request thread, errors come back as errors, and the request thread keeps turning while one runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageSummary } from '../../core/storage/audit-queries.ts';
import { Store } from '../../core/storage/index.ts';
import { searchCalls } from '../../core/storage/log-search.ts';

let home: string;
let store: Store;
beforeAll(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-reads-'));
  store = Store.open(home, { readThread: true });
  store.db.transaction(() => {
    store.db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
         INSERT INTO calls (id, time, key_name, endpoint, model, provider, status, error_message, cost_usd, pricing, latency_ms)
         SELECT printf('r%07d', i), ? - i * 1000, 'k' || (i % 7), 'chat', 'm' || (i % 3), 'p', CASE WHEN i % 10 = 0 THEN 502 ELSE 200 END,
                CASE WHEN i % 10 = 0 THEN 'upstream said no ' || i END, 0.001, 'priced', 5 FROM n`,
      )
      .run(Date.now());
  })();
});
afterAll(() => {
  store.close();
  rmSync(home, { recursive: true, force: true });
});

describe('ReadRunner', () => {
  it('answers as the request thread would', async () => {
    const since = Date.now() - 3 * 3_600_000 - 1234;
    expect(await store.reads.run('usageSummary', { by: 'model', since })).toEqual(usageSummary(store.db, { by: 'model', since }));
    const search = { limit: 50, text: 'said no 19', status: 'error' as const };
    const fromWorker = await store.reads.run('searchCalls', search);
    expect(fromWorker.length).toBe(50);
    expect(fromWorker).toEqual(searchCalls(store.db, search));
  });

  it('keeps the request thread turning while a full-table search runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      // A text no row contains: the search reads all 200k rows.
      const rows = await store.reads.run('searchCalls', { limit: 10, text: 'nothing-has-this' });
      expect(rows).toEqual([]);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(2);
  });

  it('a failing query rejects with its message; later reads still work', async () => {
    await expect(store.reads.run('usageSummary', { by: 'nope' as 'key' })).rejects.toThrow(/unknown usage grouping/);
    // The last half hour: read from the calls themselves (these rows went in by SQL, not through the writer that keeps the totals).
    expect((await store.reads.run('usageSummary', { by: 'provider', since: Date.now() - 1_800_000 }))[0]?.group).toBe('p');
  });

  it('without a file, reads run on the caller connection', async () => {
    const mem = Store.openFile(':memory:', { readThread: true });
    try {
      expect(await mem.reads.run('searchCalls', { limit: 5 })).toEqual([]);
    } finally {
      mem.close();
    }
  });
});
