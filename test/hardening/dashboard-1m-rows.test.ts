/**
 * A year of use: an audit database of 1M calls, every dashboard's polling on at once (the TUI's
 * snapshot, usage views and event stream; the /ui page's snapshot, call list, spend charts and tables,
 * provider statistics and log search, each faster than the real pollers), and `/healthz` must stay
 * quick: p99 under 50 ms (the issue's acceptance bound, deliberately generous). The sums come from the
 * running totals and must equal what the calls table says. The rows are written under schema 5 and the
 * gateway's start migrates them, so the usage totals' backfill is tested at that size too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../core/gateway/app.ts';
import type { RunningGateway } from '../../core/gateway/app.ts';
import { periodStart } from '../../core/gateway/budget.ts';
import BetterSqlite3 from 'better-sqlite3';
import { dataPaths, ensureDataHome } from '../../core/home.ts';
import { Store } from '../../core/storage/index.ts';
import { KeysRepo } from '../../core/storage/keys-repo.ts';
import { applyMigrations, MIGRATIONS } from '../../core/storage/migrations.ts';

const ROWS = 1_000_000;
let home: string;
let gw: RunningGateway;
let keyId: string;
// Enough connections for every poller and the /healthz client at once.
const agent = new Agent({ connections: 24 });

beforeAll(async () => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-1m-'));
  ensureDataHome(home);
  // Schema 5, as a gateway from before the usage totals left it; the start below migrates it.
  const db = new BetterSqlite3(dataPaths(home).db);
  try {
    db.pragma('journal_mode = WAL');
    applyMigrations(db, MIGRATIONS.filter((m) => m.version <= 5));
    keyId = new KeysRepo(db).create({ name: 'heavy', budgetUsd: 1000, budgetPeriod: 'monthly' }).key.id;
    // One statement: a recursive CTE, one call every 2.5 s going back ~29 days, inside one transaction.
    db.transaction(() => {
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO calls (id, time, key_id, key_name, endpoint, model_requested, model, provider, status, error_type,
                            input_tokens, output_tokens, cost_usd, pricing, latency_ms, attempts, attempts_json, request_body)
         SELECT printf('req_%08d', i), ? - i * 2500, CASE WHEN i % 3 = 0 THEN NULL ELSE ? END, 'heavy', 'chat',
                'gpt-4o-mini', CASE WHEN i % 5 = 0 THEN 'llama-3.1-8b' ELSE 'gpt-4o-mini' END, CASE WHEN i % 2 = 0 THEN 'openai' ELSE 'groq' END,
                CASE WHEN i % 50 = 0 THEN 502 ELSE 200 END, CASE WHEN i % 50 = 0 THEN 'api_error' END,
                100, 20, 0.0001, 'priced', 300, 1,
                '[{"provider":"' || CASE WHEN i % 2 = 0 THEN 'openai' ELSE 'groq' END || '","model":"m","status":200,"duration_ms":' || (i % 400) || '}]',
                '{"model":"gpt-4o-mini"}'
         FROM n`,
      ).run(ROWS, Date.now(), keyId);
    })();
  } finally {
    db.close();
  }
  gw = await startGateway({ home, port: 0, host: '127.0.0.1', skipDiscovery: true, secretStore: async () => null });
}, 240_000);

afterAll(async () => {
  await agent.close();
  await gw?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

const get = async (p: string, auth?: string): Promise<{ status: number; text: string }> => {
  const res = await request(`${gw.url}${p}`, { dispatcher: agent, headers: auth ? { authorization: `Bearer ${auth}` } : {} });
  return { status: res.statusCode, text: await res.body.text() };
};

const p = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

describe('dashboards at 1M rows', () => {
  it('snapshot sums equal the calls table, from the running totals', async () => {
    const res = await get('/admin/snapshot', gw.adminToken);
    expect(res.status).toBe(200);
    const snap = JSON.parse(res.text) as { spend: { today_usd: number; month_usd: number }; keys: Array<{ name: string; spent_usd: number }>; providers: unknown[]; recent: unknown[] };
    const store = Store.open(home);
    try {
      const month = store.db.prepare('SELECT TOTAL(cost_usd) AS s, COUNT(*) AS n FROM calls WHERE time >= ?').get(periodStart('monthly')) as { s: number; n: number };
      const today = store.db.prepare('SELECT TOTAL(cost_usd) AS s FROM calls WHERE time >= ?').get(periodStart('daily')) as { s: number };
      const keyMonth = store.db.prepare('SELECT TOTAL(cost_usd) AS s FROM calls WHERE key_id = ? AND time >= ?').get(keyId, periodStart('monthly')) as { s: number };
      expect(month.n).toBeGreaterThan(0);
      expect(snap.spend.month_usd).toBeCloseTo(month.s, 6);
      expect(snap.spend.today_usd).toBeCloseTo(today.s, 6);
      expect(snap.keys.find((k) => k.name === 'heavy')?.spent_usd).toBeCloseTo(keyMonth.s, 6);
      expect(snap.recent.length).toBe(50);
    } finally {
      store.close();
    }
  });

  it('usage by key, model and day equals the calls table, for a range starting mid-hour', async () => {
    const since = Date.now() - 7 * 86_400_000 - 1_234_567;
    const store = Store.open(home);
    try {
      for (const by of ['key', 'model', 'day'] as const) {
        const res = await get(`/admin/usage?by=${by}&since=${since}`, gw.adminToken);
        expect(res.status).toBe(200);
        const rows = (JSON.parse(res.text) as { rows: Array<{ group: string; requests: number; cost_usd: number; errors: number }> }).rows;
        const column = by === 'key' ? 'key_id' : by === 'model' ? 'model' : `strftime('%Y-%m-%d', time / 1000, 'unixepoch', 'localtime')`;
        const table = store.db
          .prepare(`SELECT COUNT(*) AS requests, TOTAL(cost_usd) AS cost, SUM(status >= 400) AS errors FROM calls WHERE time >= ? GROUP BY ${column} ORDER BY ${column}`)
          .all(since) as Array<{ requests: number; cost: number; errors: number }>;
        expect(rows.map((r) => r.requests).sort((a, b) => a - b)).toEqual(table.map((r) => r.requests).sort((a, b) => a - b));
        expect(rows.reduce((a, r) => a + r.cost_usd, 0)).toBeCloseTo(table.reduce((a, r) => a + r.cost, 0), 6);
        expect(rows.reduce((a, r) => a + r.errors, 0)).toBe(table.reduce((a, r) => a + r.errors, 0));
      }
    } finally {
      store.close();
    }
  });

  it('/healthz p99 stays under 50 ms while every dashboard polls', { timeout: 180_000 }, async () => {
    const now = Date.now();
    const monthStart = periodStart('monthly');
    const thirtyDays = periodStart('daily') - 29 * 86_400_000;
    // What `gateway top` (TUI) and the /ui page ask for, each polled in its own loop.
    const endpoints = [
      '/admin/snapshot?recent=100',
      '/admin/snapshot?recent=1',
      `/admin/usage?by=day&since=${thirtyDays}`,
      `/admin/usage?by=model&since=${monthStart}`,
      `/admin/usage?by=key&since=${thirtyDays}`,
      `/admin/usage/stacked?since=${thirtyDays}`,
      `/admin/usage?by=provider&since=${now - 7 * 86_400_000 - 1_234_567}`,
      `/admin/providers/stats?since=${now - 24 * 3_600_000}&until=${now}&buckets=24`,
      '/admin/logs?limit=100',
      '/admin/logs/search?limit=500',
      '/admin/logs/search?limit=500&q=api_error&status=error',
      '/admin/keys',
      '/admin/providers',
    ];
    let polling = true;
    const timings = new Map<string, number[]>(endpoints.map((e) => [e, []]));
    const pollers = endpoints.map(async (endpoint) => {
      while (polling) {
        const t0 = performance.now();
        const r = await get(endpoint, gw.adminToken);
        timings.get(endpoint)?.push(performance.now() - t0);
        expect(r.status, `${endpoint}: ${r.text.slice(0, 200)}`).toBe(200);
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    // Event-stream subscribers, as `gateway top` and the page keep one open.
    const events = await Promise.all([0, 1].map(() => request(`${gw.url}/admin/events`, { dispatcher: agent, headers: { authorization: `Bearer ${gw.adminToken}` } })));
    for (const e of events) expect(e.statusCode).toBe(200);

    const health: number[] = [];
    const until = performance.now() + 8000;
    while (performance.now() < until) {
      const t0 = performance.now();
      const r = await get('/healthz');
      health.push(performance.now() - t0);
      expect(r.status).toBe(200);
      await new Promise((r) => setTimeout(r, 5));
    }
    polling = false;
    await Promise.all(pollers);
    for (const e of events) e.body.destroy();
    const polls = Object.fromEntries([...timings].map(([e, ms]) => [e.split('?')[0] + (e.includes('q=') ? '?q' : ''), { n: ms.length, p50: Math.round(p(ms, 0.5)) }]));
    const summary = { healthz: { n: health.length, p50: p(health, 0.5), p99: p(health, 0.99) }, polls };
    console.log(`[1M rows] ${JSON.stringify(summary)}`);
    expect(health.length).toBeGreaterThan(200);
    for (const [endpoint, ms] of timings) expect(ms.length, endpoint).toBeGreaterThan(2);
    expect(summary.healthz.p99).toBeLessThan(50);
  });
});
