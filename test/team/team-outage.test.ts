/**
 * Team mode when its servers go away under a running gateway: a call that needs Redis (a key with a budget)
 * or PostgreSQL (a key this instance has not seen yet) gets a 503 in the client's envelope that names the
 * server, not a bare 500 "internal error"; calls that need neither keep working; the gateway stays up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../core/gateway/app.ts';
import { openGatewayState } from '../../core/state/open-state.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { createDatabase, startPostgres, startRedis, teamServersInstalled, teamServersRequired, type RunningServer } from './servers.ts';

const run = teamServersInstalled() || teamServersRequired();
const KEY_ENV = 'GATEWAY_TEAM_OUTAGE_TEST_KEY';

describe.skipIf(!run)('team mode: PostgreSQL or Redis gone while serving', () => {
  let pgServer: RunningServer;
  let redisServer: RunningServer;
  let upstream: FakeUpstream;
  let admin: GatewayState;
  let gw: RunningGateway;
  let home: string;
  let budgeted: string;
  let plain: string;
  let database: string;

  beforeAll(async () => {
    [pgServer, redisServer] = await Promise.all([startPostgres(), startRedis()]);
    database = await createDatabase(pgServer.url, 'gateway_outage');
    const urls = { database, redis: redisServer.url };
    upstream = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
    process.env[KEY_ENV] = 'sk-fake-outage-0123456789';
    home = mkdtempSync(path.join(tmpdir(), 'gw-outage-'));
    admin = (await openGatewayState({ home: mkdtempSync(path.join(tmpdir(), 'gw-outage-cli-')), team: urls })).state;
    await admin.providers.add({ name: 'oai', type: 'openai', preset: null, baseUrl: upstream.url, models: ['gpt-4o-mini'], priority: 100, keyEnv: KEY_ENV, keySource: 'env', options: {} });
    budgeted = (await admin.keys.create({ name: 'budgeted', budgetUsd: 5 })).secret;
    plain = (await admin.keys.create({ name: 'plain' })).secret;
    gw = await startGateway({ home, port: 0, database: urls.database, redis: urls.redis, skipDiscovery: true });
  }, 120_000);

  afterAll(async () => {
    await gw?.close().catch(() => undefined);
    await Promise.resolve(admin?.close()).catch(() => undefined);
    await upstream?.close();
    await pgServer?.stop();
    await redisServer?.stop();
    rmSync(home, { recursive: true, force: true });
    delete process.env[KEY_ENV];
  }, 60_000);

  const chat = (apiKey: string) =>
    new OpenAI({ baseURL: gw.baseUrl, apiKey, maxRetries: 0, timeout: 30_000 }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5,
    });

  async function failure(p: Promise<unknown>): Promise<{ status: number; message: string; headers: Headers | undefined }> {
    try {
      await p;
    } catch (err) {
      const e = err as { status?: number; message?: string; headers?: Headers };
      if (typeof e.status !== 'number') throw err;
      return { status: e.status, message: e.message ?? '', headers: e.headers };
    }
    throw new Error('the call succeeded');
  }

  it('answers 503 naming Redis when a budgeted call cannot reach it', async () => {
    expect((await chat(budgeted)).choices.length).toBe(1);
    await redisServer.stop();
    const f = await failure(chat(budgeted));
    expect(f.status).toBe(503);
    expect(f.message).toMatch(/Redis/);
    expect(f.message).toContain('127.0.0.1');
    expect(f.message).not.toMatch(/internal error/i);
    // A sign-in code Redis could not keep would not work: asked for now, it is a 503, not a useless 201.
    const code = await fetch(`${gw.url}/admin/login-codes`, { method: 'POST', headers: { authorization: `Bearer ${gw.adminToken}` } });
    expect(code.status).toBe(503);
    await code.body?.cancel();
  }, 60_000);

  it('answers 503 naming PostgreSQL when a key unknown to this instance cannot be looked up', async () => {
    await pgServer.pause?.();
    // Not among the keys this instance holds: it must ask PostgreSQL, and cannot say yes or no without it.
    const f = await failure(chat(`sk-gw-${'Q'.repeat(40)}`));
    expect(f.status).toBe(503);
    expect(f.message).toMatch(/PostgreSQL/);
    expect(f.message).not.toMatch(/internal error/i);
  }, 60_000);

  it('stays up: health answers, a key it knows without a budget still gets its call, and the audit rows of those calls wait for PostgreSQL', async () => {
    const logged = vi.spyOn(console, 'error');
    const health = await fetch(`${gw.baseUrl.replace(/\/v1$/, '')}/healthz`);
    expect(health.status).toBeLessThan(500);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { data, response } = await new OpenAI({ baseURL: gw.baseUrl, apiKey: plain, maxRetries: 0 }).chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `while down ${i}` }], max_tokens: 5 })
        .withResponse();
      expect(data.choices.length).toBe(1);
      ids.push(response.headers.get('x-request-id') ?? '');
    }
    // Long enough for the writer to have tried (and failed) more than once, and the config poll a few times.
    await new Promise((r) => setTimeout(r, 1_500));
    // Reported when it began (the test before), not on every poll since.
    expect(logged.mock.calls.filter((c) => String(c[0]).includes('config reload failed')).length).toBeLessThanOrEqual(1);
    logged.mockRestore();
    await pgServer.resume?.();
    let stored: string[] = [];
    for (let i = 0; i < 100 && stored.length < ids.length; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const c = new pg.Client({ connectionString: database });
      await c.connect();
      stored = (await c.query<{ id: string }>('SELECT id FROM calls WHERE id = ANY($1)', [ids])).rows.map((r) => r.id);
      await c.end();
    }
    expect(stored.sort()).toEqual([...ids].sort());
  }, 60_000);
});
