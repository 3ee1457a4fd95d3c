/**
 * A year of use: an audit database of 1M calls, the dashboard's polling on (snapshots back to back,
 * faster than the TUI's 2 s, plus an event-stream subscriber), and `/healthz` must stay quick: p99
 * under 50 ms (the acceptance bound, deliberately generous). The snapshot's sums come from the
 * running totals and must equal what the calls table says.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../core/gateway/app.ts';
import type { RunningGateway } from '../../core/gateway/app.ts';
import { periodStart } from '../../core/gateway/budget.ts';
import { Store } from '../../core/storage/index.ts';

const ROWS = 1_000_000;
let home: string;
let gw: RunningGateway;
let keyId: string;
const agent = new Agent({ connections: 4 });

beforeAll(async () => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-1m-'));
  const store = Store.open(home);
  try {
    keyId = store.keys.create({ name: 'heavy', budgetUsd: 1000, budgetPeriod: 'monthly' }).key.id;
    // One statement: a recursive CTE, one call every 2.5 s going back ~29 days, inside one transaction.
    store.db.transaction(() => {
      store.db
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
           INSERT INTO calls (id, time, key_id, key_name, endpoint, model_requested, model, provider, status, error_type,
                              input_tokens, output_tokens, cost_usd, pricing, latency_ms, attempts, attempts_json, request_body)
           SELECT printf('req_%08d', i), ? - i * 2500, CASE WHEN i % 3 = 0 THEN NULL ELSE ? END, 'heavy', 'chat',
                  'gpt-4o-mini', 'gpt-4o-mini', CASE WHEN i % 2 = 0 THEN 'openai' ELSE 'groq' END,
                  CASE WHEN i % 50 = 0 THEN 502 ELSE 200 END, CASE WHEN i % 50 = 0 THEN 'api_error' END,
                  100, 20, 0.0001, 'priced', 300, 1, '[]', '{"model":"gpt-4o-mini"}'
           FROM n`,
        )
        .run(ROWS, Date.now(), keyId);
    })();
  } finally {
    store.close();
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

  it('/healthz p99 stays under 50 ms while the dashboard polls', { timeout: 120_000 }, async () => {
    let polling = true;
    const snapshotMs: number[] = [];
    const poller = (async () => {
      while (polling) {
        const t0 = performance.now();
        const r = await get('/admin/snapshot', gw.adminToken);
        snapshotMs.push(performance.now() - t0);
        expect(r.status).toBe(200);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // An event-stream subscriber, as `gateway top` keeps one open.
    const events = await request(`${gw.url}/admin/events`, { dispatcher: agent, headers: { authorization: `Bearer ${gw.adminToken}` } });
    expect(events.statusCode).toBe(200);

    const health: number[] = [];
    const until = performance.now() + 6000;
    while (performance.now() < until) {
      const t0 = performance.now();
      const r = await get('/healthz');
      health.push(performance.now() - t0);
      expect(r.status).toBe(200);
      await new Promise((r) => setTimeout(r, 5));
    }
    polling = false;
    await poller;
    events.body.destroy();
    const summary = { healthz: { n: health.length, p50: p(health, 0.5), p99: p(health, 0.99) }, snapshot: { n: snapshotMs.length, p50: p(snapshotMs, 0.5), p99: p(snapshotMs, 0.99) } };
    console.log(`[1M rows] ${JSON.stringify(summary)}`);
    expect(health.length).toBeGreaterThan(200);
    expect(snapshotMs.length).toBeGreaterThan(10);
    expect(summary.healthz.p99).toBeLessThan(50);
  });
});
