/**
 * The running usage totals (usage_hourly, kept by the audit writer) give the same answers as scanning the calls table, for
 * ranges that start and end mid-hour, in time zones with whole, half- and three-quarter-hour offsets
 * (and one whose daylight saving moves by 30 minutes). The oracle is the scan the summaries used before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { usageSummary, type UsageGrouping } from '../../core/storage/audit-queries.ts';
import { AuditWriter } from '../../core/storage/audit-writer.ts';
import { Store } from '../../core/storage/index.ts';
import { spendByDayAndModel, unpricedByKey } from '../../core/storage/log-search.ts';
import { localHourCeil, localHourFloor } from '../../core/storage/usage-rollup.ts';
import type { Database } from '../../core/storage/db.ts';

const ORACLE_GROUP: Record<UsageGrouping, string> = {
  key: `c.key_id`,
  model: `COALESCE(c.model, c.model_requested, '(none)')`,
  provider: `COALESCE(c.provider, '(none)')`,
  day: `strftime('%Y-%m-%d', c.time / 1000, 'unixepoch', 'localtime')`,
};

function oracle(db: Database, by: UsageGrouping, since?: number, until?: number) {
  const label =
    by === 'key'
      ? `CASE WHEN c.key_id IS NULL THEN '(no key)' WHEN k.state = 'deleted' THEN COALESCE(k.name, MAX(c.key_name)) || ' (deleted)'
              ELSE COALESCE(k.name, MAX(c.key_name), c.key_id) END`
      : ORACLE_GROUP[by];
  return db
    .prepare(
      `SELECT ${label} AS "group", COUNT(*) AS requests, TOTAL(c.input_tokens) AS input_tokens, TOTAL(c.output_tokens) AS output_tokens,
              TOTAL(c.cached_tokens) AS cached_tokens, TOTAL(c.cache_write_tokens) AS cache_write_tokens,
              TOTAL(c.reasoning_tokens) AS reasoning_tokens, TOTAL(c.cost_usd) AS cost_usd, SUM(c.status >= 400) AS errors,
              SUM(c.pricing = 'unpriced' AND c.provider IS NOT NULL) AS unpriced
       FROM calls c ${by === 'key' ? 'LEFT JOIN keys k ON k.id = c.key_id' : ''}
       WHERE c.time >= ? AND c.time < ? GROUP BY ${ORACLE_GROUP[by]}`,
    )
    .all(since ?? Number.MIN_SAFE_INTEGER, until ?? Number.MAX_SAFE_INTEGER) as Array<Record<string, number | string>>;
}

/** Rows keyed by group, with costs rounded (sums taken in another order differ in the last bits). */
const normalise = (rows: ReadonlyArray<object>) =>
  Object.fromEntries((rows as Array<Record<string, unknown>>).map((r) => [String(r.group ?? `${String(r.day)}|${String(r.model)}`), { ...r, cost_usd: Math.round(Number(r.cost_usd) * 1e9) }]));

const homes: string[] = [];
afterAll(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

const ZONES = ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Europe/Paris'];

describe.each(ZONES)('usage from running totals in %s', (zone) => {
  it('equals a scan of the calls table for every grouping and mid-hour ranges', () => {
    const saved = process.env.TZ;
    process.env.TZ = zone;
    const home = mkdtempSync(path.join(tmpdir(), 'gw-rollup-'));
    homes.push(home);
    const store = Store.open(home);
    try {
      const { db } = store;
      // SQLite and JS must agree on the zone, or the test would prove nothing.
      const probe = Date.UTC(2025, 6, 1, 12, 0, 0);
      const sqliteLocal = (db.prepare(`SELECT strftime('%H:%M', ? / 1000, 'unixepoch', 'localtime') AS t`).get(probe) as { t: string }).t;
      const d = new Date(probe);
      expect(sqliteLocal).toBe(`${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`);

      const alive = store.keys.create({ name: 'alive' }).key.id;
      const gone = store.keys.create({ name: 'gone' }).key.id;
      store.keys.delete('gone');
      // Around a daylight-saving change in both hemispheres (early April) and calls every ~7 minutes.
      const start = Date.UTC(2025, 3, 3, 0, 0, 0);
      let seed = 7;
      const rnd = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed % n;
      };
      // Through the audit writer, which keeps the totals (in batches of 97, so buckets span batches).
      const writer = new AuditWriter(db, { maxBatch: 97, flushIntervalMs: 60_000 });
      for (let i = 0; i < 1500; i++) {
        const key = [alive, gone, null][rnd(3)];
        const provider = ['openai', 'groq', null][rnd(3)];
        const pricing = (['priced', 'estimated', 'unpriced'] as const)[rnd(3)];
        const model = rnd(5) === 0 ? null : ['gpt-4o', 'llama'][rnd(2)];
        writer.record({
          id: `c${i}`, time: start + i * 7 * 60_000 + rnd(60_000), keyId: key, keyName: key === alive ? 'alive' : key === gone ? 'gone' : null,
          endpoint: 'chat', modelRequested: 'asked', model, provider, status: [200, 200, 429, 502][rnd(4)], errorType: null, errorMessage: null,
          stream: false, inputTokens: rnd(1000), outputTokens: rnd(500), cachedTokens: rnd(50), cacheWriteTokens: rnd(7), reasoningTokens: rnd(20),
          costUsd: pricing === 'unpriced' ? null : rnd(1000) / 1e6, pricing, priceVersion: null, latencyMs: 5, ttftMs: null, attempts: 1,
          attemptsJson: '[]', requestBody: null, responseBody: null,
        });
      }
      writer.close();
      const end = start + 1500 * 7 * 60_000;
      const ranges: Array<[number | undefined, number | undefined]> = [
        [undefined, undefined],
        [start + 37 * 60_000 + 123, undefined],
        [localHourCeil(start + 86_400_000), undefined],
        [start + 5_000_000, end - 3_333_333],
        [start + 20 * 60_000, start + 50 * 60_000],
        [undefined, localHourFloor(end - 86_400_000) + 1],
      ];
      for (const [since, until] of ranges) {
        for (const by of ['key', 'model', 'provider', 'day'] as const) {
          expect(normalise(usageSummary(db, { by, since, until })), `${by} ${since} ${until}`).toEqual(normalise(oracle(db, by, since, until)));
        }
      }
      const since = start + 86_400_000 + 17 * 60_000;
      const stacked = db
        .prepare(
          `SELECT strftime('%Y-%m-%d', time / 1000, 'unixepoch', 'localtime') AS day, COALESCE(model, model_requested, '(none)') AS model,
                  TOTAL(cost_usd) AS cost_usd, COUNT(*) AS requests, SUM(pricing = 'unpriced' AND status < 400 AND provider IS NOT NULL) AS unpriced,
                  SUM(pricing = 'estimated') AS estimated FROM calls WHERE time >= ? GROUP BY 1, 2`,
        )
        .all(since) as Array<Record<string, unknown>>;
      expect(normalise(spendByDayAndModel(db, since))).toEqual(normalise(stacked));
      const byKey = db
        .prepare(`SELECT COALESCE(key_name, '(no key)') AS "group", COUNT(*) AS unpriced FROM calls WHERE time >= ? AND pricing = 'unpriced' AND status < 400 AND provider IS NOT NULL GROUP BY 1`)
        .all(since) as Array<Record<string, unknown>>;
      expect(Object.fromEntries(unpricedByKey(db, since).map((r) => [r.key, r.unpriced]))).toEqual(Object.fromEntries(byKey.map((r) => [r.group, r.unpriced])));
      expect(byKey.length).toBeGreaterThan(0);
    } finally {
      store.close();
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});
