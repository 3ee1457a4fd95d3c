/**
 * Team mode end to end: real PostgreSQL and Redis servers (Debian's packages) and three gateway
 * instances on them, each with its own data home, in front of one fake OpenAI upstream. A key created
 * through one instance is honoured by all within a second; a budget and an RPM limit hold across the
 * three; every instance's audit rows land in one table; stopping one loses none of the others' calls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../core/gateway/app.ts';
import { openGatewayState } from '../../core/state/open-state.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startOpenAIUpstream, toScenario } from '../fakes/openai-upstream.ts';
import { runScenario } from '../fakes/scenario.ts';
import { createDatabase, startPostgres, startRedis, teamServersInstalled, teamServersRequired, type RunningServer } from './servers.ts';

const run = teamServersInstalled() || teamServersRequired();
// gpt-4o-mini's list price (USD per million tokens), as the bundled price data has it.
const MINI = { input: 0.15, output: 0.6 };
const LONG = 16_000;
const KEY_ENV = 'GATEWAY_TEAM_TEST_OPENAI_KEY';

describe.skipIf(!run)('team mode: three instances on PostgreSQL and Redis', () => {
  let pgServer: RunningServer;
  let redisServer: RunningServer;
  let upstream: FakeUpstream;
  let urls: { database: string; redis: string };
  let admin: GatewayState;
  let gws: RunningGateway[] = [];
  const homes: string[] = [];

  beforeAll(async () => {
    [pgServer, redisServer] = await Promise.all([startPostgres(), startRedis()]);
    urls = { database: await createDatabase(pgServer.url, 'gateway_team'), redis: redisServer.url };
    upstream = await startOpenAIUpstream({ models: ['gpt-4o-mini'], longAnswers: LONG });
    process.env[KEY_ENV] = 'sk-fake-team-0123456789';
    admin = (await openGatewayState({ home: mkdtempSync(path.join(tmpdir(), 'gw-team-cli-')), team: urls })).state;
    await admin.providers.add({ name: 'oai', type: 'openai', preset: null, baseUrl: upstream.url, models: ['gpt-4o-mini'], priority: 100, keyEnv: KEY_ENV, keySource: 'env', options: {} });
    for (let i = 0; i < 3; i++) {
      const home = mkdtempSync(path.join(tmpdir(), `gw-team-${i}-`));
      homes.push(home);
      gws.push(await startGateway({ home, port: 0, database: urls.database, redis: urls.redis, skipDiscovery: true, settings: { shutdownGraceMs: 5_000 } }));
    }
  }, 120_000);

  afterAll(async () => {
    for (const g of gws) await g.close().catch(() => undefined);
    await admin?.close();
    await upstream?.close();
    await pgServer?.stop();
    await redisServer?.stop();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
    delete process.env[KEY_ENV];
  }, 60_000);

  const client = (g: RunningGateway, apiKey: string) => new OpenAI({ baseURL: g.baseUrl, apiKey, maxRetries: 0, timeout: 60_000 });
  const chat = (g: RunningGateway, apiKey: string, content: string, maxTokens?: number) =>
    client(g, apiKey).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...(maxTokens ? { max_tokens: maxTokens } : {}) });

  async function status(p: Promise<unknown>): Promise<number> {
    try {
      await p;
      return 200;
    } catch (err) {
      const s = (err as { status?: number }).status;
      if (typeof s !== 'number') throw err;
      return s;
    }
  }

  async function callsTable<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const c = new pg.Client({ connectionString: urls.database });
    await c.connect();
    try {
      return (await c.query<T>(sql, params)).rows;
    } finally {
      await c.end();
    }
  }

  it('runs on PostgreSQL and Redis, not on SQLite', () => {
    for (const g of gws) expect(g.deps.store.kind).toBe('team');
  });

  it('a key created through one instance is honoured by all within a second', async () => {
    const res = await fetch(`${gws[0].url}/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gws[0].adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'shared' }),
    });
    expect(res.status).toBe(201);
    const { key } = (await res.json()) as { key: string };
    const created = Date.now();
    for (const g of gws) {
      let ok = false;
      while (!ok && Date.now() - created < 1_000) {
        // Asks the in-memory table only (no look-up of unknown keys): what pub/sub or the poll delivered.
        ok = [...g.deps.live.keysByHash.values()].some((k) => k.name === 'shared');
        if (!ok) await new Promise((r) => setTimeout(r, 20));
      }
      expect(ok).toBe(true);
      expect(await status(chat(g, key, 'hello'))).toBe(200);
    }
    // Disabling it through another instance takes effect everywhere too.
    await gws[2].deps.store.keys.setState('shared', 'disabled');
    await new Promise((r) => setTimeout(r, 1_000));
    for (const g of gws) expect(await status(chat(g, key, 'hello again'))).toBe(401);
  });

  it('a budget holds across 200 concurrent calls spread over the three', async () => {
    const BUDGET = 0.05;
    const { secret } = await admin.keys.create({ name: 'budgeted', budgetUsd: BUDGET, budgetPeriod: 'total' });
    await new Promise((r) => setTimeout(r, 600));
    const before = upstream.requests.length;
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => status(chat(gws[i % 3], secret, `Tell me story ${i}`, 1_000 + (i % 7) * 100))));
    const served = outcomes.filter((s) => s === 200).length;
    expect(served).toBeGreaterThan(0);
    expect(outcomes.filter((s) => s !== 200 && s !== 402)).toEqual([]);
    // What the upstream served, recomputed from the requests it got and priced at list price.
    const usd = upstream.requests.slice(before).filter((r) => r.method === 'POST').reduce((sum, r) => {
      const body = r.body as Record<string, unknown>;
      const reply = runScenario({ ...toScenario(body), padToWords: LONG });
      return sum + (reply.promptTokens * MINI.input + reply.completionTokens * MINI.output) / 1e6;
    }, 0);
    expect(upstream.requests.slice(before).length).toBe(served);
    expect(usd).toBeGreaterThan(0);
    expect(usd).toBeLessThanOrEqual(BUDGET);
  }, 120_000);

  it('a requests-per-minute limit holds across them', async () => {
    const { secret } = await admin.keys.create({ name: 'limited', rpm: 10 });
    await new Promise((r) => setTimeout(r, 600));
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => status(chat(gws[i % 3], secret, `quick ${i}`, 5))));
    expect(outcomes.filter((s) => s === 200).length).toBe(10);
    expect(outcomes.filter((s) => s === 429).length).toBe(20);
  }, 60_000);

  it("every instance's audit rows land in one table", async () => {
    const { secret } = await admin.keys.create({ name: 'audited' });
    await new Promise((r) => setTimeout(r, 600));
    const ids: string[][] = [[], [], []];
    for (let i = 0; i < 9; i++) {
      const res = await fetch(`${gws[i % 3].baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `row ${i}` }], max_tokens: 5 }),
      });
      expect(res.status).toBe(200);
      ids[i % 3].push(res.headers.get('x-request-id') ?? '');
      await res.text();
    }
    for (const g of gws) await g.deps.store.drainAudit();
    const rows = await callsTable<{ id: string; key_name: string; cost_usd: number }>(`SELECT id, key_name, cost_usd FROM calls WHERE id = ANY($1)`, [ids.flat()]);
    expect(rows.map((r) => r.id).sort()).toEqual(ids.flat().sort());
    for (const r of rows) {
      expect(r.key_name).toBe('audited');
      expect(r.cost_usd).toBeGreaterThan(0);
    }
    // The CLI's view (the same state, another connection) reads them back.
    const usage = await admin.calls.usageSummary({ by: 'key' });
    expect(usage.find((u) => u.group === 'audited')?.requests).toBe(9);
  });

  it('a dashboard sign-in from one instance works on every other, once', async () => {
    const code = new URL(gws[0].loginLink(60_000)).hash.replace(/^#login=/, '');
    const login = (g: RunningGateway) =>
      fetch(`${g.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: decodeURIComponent(code) }) });
    const traded = await login(gws[1]);
    expect(traded.status).toBe(200);
    const { token } = (await traded.json()) as { token: string };
    // Behind a load balancer the page's next requests land anywhere.
    for (const g of gws) {
      const r = await fetch(`${g.url}/admin/keys`, { headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(200);
      await r.text();
    }
    // Spent: not on the instance that issued it, nor on the one that took it.
    for (const g of [gws[0], gws[1]]) expect((await login(g)).status).toBe(401);
    const wrong = await fetch(`${gws[2].url}/admin/keys`, { headers: { authorization: `Bearer gwsess-${'x'.repeat(32)}` } });
    expect(wrong.status).toBe(401);
    // Nothing secret is kept in Redis: only hashes of the code and the session.
    const r = new Redis(urls.redis);
    try {
      const keys = await r.keys('gw:login:*');
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) {
        expect(k).not.toContain(token.slice(7));
        expect(await r.get(k)).toBe('admin-token');
      }
    } finally {
      r.disconnect();
    }
  });

  it("stopping one instance loses none of the others' calls", async () => {
    const { secret } = await admin.keys.create({ name: 'steady' });
    await new Promise((r) => setTimeout(r, 600));
    const survivors = gws.slice(1);
    const sent: Array<Promise<string>> = [];
    for (let i = 0; i < 40; i++) {
      sent.push(
        fetch(`${survivors[i % 2].baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `steady ${i}` }], max_tokens: 50 }),
        }).then(async (res) => {
          expect(res.status).toBe(200);
          await res.text();
          return res.headers.get('x-request-id') ?? '';
        }),
      );
      if (i === 10) void gws[0].close();
    }
    const ids = await Promise.all(sent);
    await gws[0].close();
    for (const g of survivors) await g.deps.store.drainAudit();
    const rows = await callsTable<{ n: number }>(`SELECT COUNT(*)::int AS n FROM calls WHERE id = ANY($1) AND status = 200`, [ids]);
    expect(rows[0].n).toBe(40);
    gws = survivors;
  }, 60_000);
});
