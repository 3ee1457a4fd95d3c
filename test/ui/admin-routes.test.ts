/**
 * The admin routes the dashboards act through, over real HTTP against a real gateway: bad input gets
 * the error envelope with the field named, unknown names are 404 (never a 5xx), sign-in codes work once
 * and expire, sessions are accepted like the admin token, a foreign Origin is refused even with a
 * code, the log search filters on the server, and the CSV export quotes what a spreadsheet would run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoginCodes } from '../../core/admin/login-codes.ts';
import { callsToCsv } from '../../core/storage/log-search.ts';
import type { CallJson } from '../../core/call-json.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

interface Envelope {
  error: { message: string; type: string; param: string | null; code: string | null };
}

describe('admin routes for the dashboards', () => {
  let t: TestGateway;
  const call = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${t.gw.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${t.gw.adminToken}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, text, json: (r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null) as unknown };
  };

  beforeAll(async () => {
    t = await startTestGateway({ demo: true, keys: [{ name: 'k1' }, { name: 'k2' }] });
    for (const k of ['k1', 'k2', 'k1']) await t.client({ apiKey: t.keys[k] }).chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: `hi from ${k}` }] });
    await t.client({ apiKey: t.keys.k2 }).chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    t.flush();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses key names the CLI refuses (markup, a formula, a slash), on create and on rename', async () => {
    for (const name of ['<img src=x onerror=alert(1)>', '=HYPERLINK("http://e")', 'a/b', ' lead']) {
      const made = await call('POST', '/admin/keys', { name });
      expect(made.status, name).toBe(400);
      expect((made.json as Envelope).error).toMatchObject({ type: 'invalid_request_error', param: 'name' });
      const renamed = await call('PATCH', '/admin/keys/k2', { name });
      expect(renamed.status, name).toBe(400);
    }
  });

  it('refuses bad key edits with the field named, and unknown keys with 404', async () => {
    const bad = await call('PATCH', '/admin/keys/k1', { rpm: -3 });
    expect(bad.status).toBe(400);
    expect((bad.json as Envelope).error).toMatchObject({ type: 'invalid_request_error', param: 'rpm' });
    const extra = await call('PATCH', '/admin/keys/k1', { colour: 'red' });
    expect(extra.status).toBe(400);
    const missing = await call('POST', '/admin/keys/nobody/disable');
    expect(missing.status).toBe(404);
    expect((missing.json as Envelope).error.message).toContain('nobody');
    const notJson = await call('PATCH', '/admin/keys/k1', '{oops');
    expect(notJson.status).toBe(400);
    expect((notJson.json as Envelope).error.code).toBe('invalid_json');
    // Clearing a limit with null works, and a period without a budget is refused.
    expect((await call('PATCH', '/admin/keys/k1', { budget_usd: 5, budget_period: 'monthly' })).status).toBe(200);
    expect(((await call('PATCH', '/admin/keys/k1', { budget_usd: null })).json as { budget_usd: null; budget_period: null })).toMatchObject({ budget_usd: null, budget_period: null });
    expect((await call('PATCH', '/admin/keys/k1', { budget_period: 'daily' })).status).toBe(400);
  });

  it('refuses a provider without the env var it needs, a secret-looking URL, and duplicates', async () => {
    const noKey = await call('POST', '/admin/providers', { name: 'oa', type: 'openai' });
    expect(noKey.status).toBe(400);
    expect((noKey.json as Envelope).error.param).toBe('key_env');
    const badEnv = await call('POST', '/admin/providers', { name: 'oa', type: 'openai', key_env: 'sk-live-abc' });
    expect(badEnv.status).toBe(400);
    expect((badEnv.json as Envelope).error.param).toBe('key_env');
    const secretUrl = await call('POST', '/admin/providers', { name: 'oa', type: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1?api_key=sekret', models: ['m'] });
    expect(secretUrl.status).toBe(400);
    const dup = await call('POST', '/admin/providers', { name: 'demo', type: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1', models: ['m'] });
    expect(dup.status).toBe(400);
    expect((await call('PATCH', '/admin/providers/nobody', { priority: 1 })).status).toBe(404);
    expect((await call('PATCH', '/admin/providers/demo', { priority: 1.5 })).status).toBe(400);
  });

  it('tests a provider that cannot be reached in plain words, through the gateway', async () => {
    const added = await call('POST', '/admin/providers', { name: 'dead', type: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1', models: ['dead-model'] });
    expect(added.status).toBe(201);
    const r = await call('POST', '/admin/providers/dead/test');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ provider: 'dead', ok: false, model: 'dead-model' });
    expect((r.json as { verdict: string }).verdict).toMatch(/^not reachable/);
    expect((await call('DELETE', '/admin/providers/dead')).status).toBe(200);
    expect((await call('DELETE', '/admin/providers/dead')).status).toBe(404);
  });

  it('searches calls on the server by key, model, status, time and text', async () => {
    const ids = (q: string) => call('GET', `/admin/logs/search?${q}`).then((r) => (r.json as { calls: CallJson[] }).calls);
    expect(await ids('key=k1')).toHaveLength(2);
    expect((await ids('status=404')).map((c) => c.model_requested)).toEqual(['nope']);
    expect(await ids('status=ok&key=k2')).toHaveLength(1);
    expect(await ids('model=demo-chat')).toHaveLength(3);
    expect(await ids(`since=${Date.now() + 60_000}`)).toHaveLength(0);
    expect(await ids('q=NOPE')).toHaveLength(1);
    expect(await ids('q=100%25_')).toHaveLength(0); // LIKE wildcards are literal
    const bad = await call('GET', '/admin/logs/search?status=teapot');
    expect(bad.status).toBe(400);
    expect((bad.json as Envelope).error.param).toBe('status');
    const csv = await call('GET', '/admin/logs.csv?key=k1');
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.text.trim().split('\r\n')).toHaveLength(3);
  });

  it('quotes CSV cells, and defuses ones a spreadsheet would run as a formula', () => {
    const row = { id: 'req_1', time: '2026-01-01T00:00:00.000Z', key: '=HYPERLINK("x")', endpoint: '/v1/chat/completions', model_requested: 'a,b', model: null, provider: null, status: 400, error_type: 'x', error_message: null, stream: false, input_tokens: 0, output_tokens: 0, cached_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, cost_usd: null, pricing: 'unpriced', price_version: null, latency_ms: 1, ttft_ms: null, attempts: 0 } satisfies CallJson;
    const line = callsToCsv([row]).split('\r\n')[1];
    expect(line).toContain(`"'=HYPERLINK(""x"")"`);
    expect(line).toContain('"a,b"');
  });

  it('sign-in codes work once; sessions act as the admin token; a foreign Origin is refused', async () => {
    const issued = await call('POST', '/admin/login-codes');
    expect(issued.status).toBe(201);
    const code = (issued.json as { code: string }).code;
    const foreign = await fetch(`${t.gw.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://evil.example' }, body: JSON.stringify({ code }) });
    expect(foreign.status).toBe(403);
    const ok = await fetch(`${t.gw.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    expect(ok.status).toBe(200);
    const { token } = (await ok.json()) as { token: string };
    expect((await fetch(`${t.gw.url}/admin/snapshot`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${t.gw.url}/admin/snapshot`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    const twice = await fetch(`${t.gw.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    expect(twice.status).toBe(401);
    // No code without the admin token.
    expect((await fetch(`${t.gw.url}/admin/login-codes`, { method: 'POST' })).status).toBe(401);
    expect((await call('POST', '/admin/login-codes', { ttl_seconds: 100_000 })).status).toBe(400);
    // Signing out ends the session on the server: its token is refused from then on; the admin token is not ended by it.
    expect((await fetch(`${t.gw.url}/admin/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).toBe(204);
    expect((await fetch(`${t.gw.url}/admin/snapshot`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await call('POST', '/admin/logout')).status).toBe(204);
    expect((await call('GET', '/admin/snapshot')).status).toBe(200);
  });

  it('codes expire, and sessions too', () => {
    let now = 1_000_000;
    const codes = new LoginCodes(() => now);
    const a = codes.issue();
    now += 61_000;
    expect(codes.exchange(a.code)).toBeNull();
    const b = codes.issue(600_000);
    now += 300_000;
    const s = codes.exchange(b.code);
    expect(s).not.toBeNull();
    expect(codes.isSession(s!.session)).toBe(true);
    now += 13 * 3_600_000;
    expect(codes.isSession(s!.session)).toBe(false);
  });
});
