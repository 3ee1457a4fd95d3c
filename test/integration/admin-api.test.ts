/**
 * The admin API under `/admin/*` against a real gateway: the admin token (none, wrong, right), the
 * Origin rule (a foreign Origin is refused even with the right token, even one configured for CORS),
 * the snapshot's contents after real calls, and the `/admin/events` stream.
 */
import { request } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

function raw(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: { host: `127.0.0.1:${port}`, ...opts.headers }, agent: false, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = null;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.end(opts.body);
  });
}

/** A chat call through the gateway; returns the x-request-id and the cost header. */
async function chat(t: TestGateway, key: string, text: string): Promise<{ id: string; cost: number }> {
  const r = await raw(t.gw.port, {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }),
  });
  expect(r.status, r.text).toBe(200);
  return { id: String(r.headers['x-request-id']), cost: Number(r.headers['x-gateway-cost-usd']) };
}

/** Opens `/admin/events` and collects the events as they arrive. */
function subscribe(port: number, token: string): Promise<{ res: IncomingMessage; events: Array<{ event: string; data: string }>; comments: string[]; close(): void; next(pred: (e: { event: string; data: string }) => boolean, ms?: number): Promise<{ event: string; data: string }> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/admin/events', headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}`, accept: 'text/event-stream' }, agent: false, setHost: false });
    req.on('error', reject);
    req.on('response', (res) => {
      const events: Array<{ event: string; data: string }> = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let connected!: () => void;
      const ready = new Promise<void>((r) => (connected = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          if (data.length > 0) events.push({ event, data: data.join('\n') });
          if (comments.includes('connected')) connected();
          for (const w of waiters) w();
        }
      });
      res.on('error', () => undefined);
      const handle = {
        res,
        events,
        comments,
        close: () => req.destroy(),
        next: (pred: (e: { event: string; data: string }) => boolean, ms = 5_000) =>
          new Promise<{ event: string; data: string }>((ok, fail) => {
            const check = () => {
              const hit = events.find(pred);
              if (!hit) return;
              clearTimeout(timer);
              waiters.delete(check);
              ok(hit);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching event within ${ms} ms; got ${JSON.stringify(events)}`));
            }, ms);
            waiters.add(check);
            check();
          }),
      };
      if (res.statusCode !== 200) {
        resolve(handle);
        return;
      }
      void ready.then(() => resolve(handle));
    });
    req.end();
  });
}

let up: FakeUpstream;
beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
});
afterAll(async () => {
  await up?.close();
});

describe('admin API', () => {
  let t: TestGateway;
  let port: number;
  let token: string;
  const calls: Array<{ id: string; cost: number }> = [];
  beforeAll(async () => {
    t = await startTestGateway({
      providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-upstream-secret-123456789' }],
      keys: [{ name: 'editor' }, { name: 'agent', budgetUsd: 5, budgetPeriod: 'monthly' }],
    });
    port = t.gw.port;
    token = t.gw.adminToken;
    calls.push(await chat(t, t.keys.editor, 'hello from the editor'));
    calls.push(await chat(t, t.keys.agent, 'hello from the agent, a little longer than the first one'));
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('authentication', () => {
    it.each(['/admin/snapshot', '/admin/keys', '/admin/providers', '/admin/usage', '/admin/logs', '/admin/events'])('refuses %s without a token (401)', async (p) => {
      const r = await raw(port, { path: p });
      expect(r.status).toBe(401);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.body.error).toMatchObject({ type: 'invalid_api_key', code: 'invalid_admin_token' });
      expect(r.body.error.message).toMatch(/admin-token/);
      expect(r.text).not.toContain('editor');
    });

    it.each([
      ['a wrong token', () => 'gwadm-not-the-right-token'],
      ['a wrong token of the same length', () => `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`],
      ['the token with extra characters', () => `${token}x`],
      ['a gateway key', () => t.keys.editor],
    ])('refuses %s (401)', async (_label, given) => {
      const r = await raw(port, { path: '/admin/snapshot', headers: { authorization: `Bearer ${given()}` } });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_admin_token');
      expect(r.text).not.toContain('spend');
    });

    it('refuses a non-Bearer scheme carrying the right token', async () => {
      const r = await raw(port, { path: '/admin/snapshot', headers: { authorization: `Basic ${token}` } });
      expect(r.status).toBe(401);
    });

    it('does not accept the admin token as a gateway key on /v1', async () => {
      const r = await raw(port, { path: '/v1/models', headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_api_key');
    });

    it('refuses a foreign Origin even with the right token (403 origin_not_allowed)', async () => {
      const r = await raw(port, { path: '/admin/snapshot', headers: { authorization: `Bearer ${token}`, origin: 'https://evil.example' } });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'origin_not_allowed' });
      expect(r.text).not.toContain('spend');
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('refuses a foreign Origin on the event stream too', async () => {
      const r = await raw(port, { path: '/admin/events', headers: { authorization: `Bearer ${token}`, origin: 'http://localhost:3000' } });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('origin_not_allowed');
    });

    it('accepts its own origin (the dashboard page) with the right token', async () => {
      const r = await raw(port, { path: '/admin/snapshot', headers: { authorization: `Bearer ${token}`, origin: `http://127.0.0.1:${port}` } });
      expect(r.status).toBe(200);
      expect(r.body.spend).toBeDefined();
    });
  });

  describe('with the right token', () => {
    it('serves the snapshot: spend today and this month, per key, per provider, recent calls', async () => {
      const r = await raw(port, { path: '/admin/snapshot', headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.headers['cache-control']).toBe('no-store');
      const s = r.body;
      const total = calls[0].cost + calls[1].cost;
      expect(calls[0].cost).toBeGreaterThan(0);
      expect(calls[1].cost).toBeGreaterThan(0);
      expect(s.spend.today_usd).toBeCloseTo(total, 12);
      expect(s.spend.month_usd).toBeCloseTo(total, 12);

      const byName = Object.fromEntries((s.keys as Array<{ name: string; spent_usd: number; remaining_usd: number | null }>).map((k) => [k.name, k]));
      expect(Object.keys(byName).sort()).toEqual(['agent', 'editor']);
      expect(byName.editor).toMatchObject({ state: 'active', budget_usd: null, spent_period: 'daily' });
      expect(byName.editor.spent_usd).toBeCloseTo(calls[0].cost, 12);
      expect(byName.agent).toMatchObject({ state: 'active', budget_usd: 5, budget_period: 'monthly', spent_period: 'monthly' });
      expect(byName.agent.spent_usd).toBeCloseTo(calls[1].cost, 12);
      expect(byName.agent.remaining_usd).toBeCloseTo(5 - calls[1].cost, 12);
      // Key secrets and hashes never leave the gateway.
      expect(r.text).not.toContain(t.keys.editor);
      expect(r.text).not.toContain(t.keys.agent);

      expect(s.providers).toHaveLength(1);
      expect(s.providers[0]).toMatchObject({ name: 'oa', type: 'openai', base_url: up.url, models: ['gpt-4o-mini'], key_source: 'keychain', health: 'closed' });
      expect(s.providers[0].spent_today_usd).toBeCloseTo(total, 12);
      expect(s.providers[0].spent_month_usd).toBeCloseTo(total, 12);
      expect(r.text).not.toContain('sk-upstream-secret-123456789');

      const recentIds = (s.recent as Array<{ id: string }>).map((c) => c.id);
      expect(recentIds.slice(0, 2)).toEqual([calls[1].id, calls[0].id]);
      expect(s.recent[0]).toMatchObject({ key: 'agent', model: 'gpt-4o-mini', provider: 'oa', status: 200, pricing: 'priced' });
      expect(typeof s.price_version).toBe('string');
    });

    it('serves keys, providers, usage and logs', async () => {
      const h = { authorization: `Bearer ${token}` };
      const keys = await raw(port, { path: '/admin/keys', headers: h });
      expect(keys.status).toBe(200);
      expect((keys.body.keys as Array<{ name: string }>).map((k) => k.name).sort()).toEqual(['agent', 'editor']);

      const providers = await raw(port, { path: '/admin/providers', headers: h });
      expect(providers.status).toBe(200);
      expect(providers.body.providers[0].name).toBe('oa');

      const usage = await raw(port, { path: '/admin/usage?by=key', headers: h });
      expect(usage.status).toBe(200);
      expect((usage.body.rows as Array<{ group: string; requests: number }>).map((x) => x.group).sort()).toEqual(['agent', 'editor']);
      const bad = await raw(port, { path: '/admin/usage?by=colour', headers: h });
      expect(bad.status).toBe(400);

      const logs = await raw(port, { path: '/admin/logs?limit=1', headers: h });
      expect(logs.status).toBe(200);
      expect(logs.body.calls).toHaveLength(1);
      expect(logs.body.calls[0].id).toBe(calls[1].id);

      const detail = await raw(port, { path: `/admin/logs/${calls[0].id}`, headers: h });
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ id: calls[0].id, key: 'editor', status: 200 });
      expect(detail.body.request_body).toContain('hello from the editor');
      expect(detail.body.attempt_list).toEqual([expect.objectContaining({ provider: 'oa', status: 200 })]);

      const missing = await raw(port, { path: '/admin/logs/req_nope', headers: h });
      expect(missing.status).toBe(404);
    });

    it('streams a `call` event for a chat call made after subscribing', async () => {
      const sub = await subscribe(port, token);
      try {
        expect(sub.res.statusCode).toBe(200);
        expect(sub.res.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(sub.events).toEqual([]);
        const made = await chat(t, t.keys.editor, 'watched call');
        const ev = await sub.next((e) => e.event === 'call' && (JSON.parse(e.data) as { id: string }).id === made.id);
        const data = JSON.parse(ev.data) as Record<string, unknown>;
        expect(data).toMatchObject({ id: made.id, key: 'editor', endpoint: '/v1/chat/completions', model: 'gpt-4o-mini', provider: 'oa', status: 200, pricing: 'priced' });
        expect(data.cost_usd).toBeCloseTo(made.cost, 12);
        // Calls made before subscribing are not replayed.
        expect(sub.events.map((e) => (JSON.parse(e.data) as { id: string }).id)).not.toContain(calls[0].id);
      } finally {
        sub.close();
      }
    });

    it('streams failed calls too, with their status', async () => {
      const sub = await subscribe(port, token);
      try {
        const r = await raw(port, {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { authorization: `Bearer ${t.keys.editor}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
        });
        expect(r.status).toBe(404);
        const id = String(r.headers['x-request-id']);
        const ev = await sub.next((e) => e.event === 'call' && (JSON.parse(e.data) as { id: string }).id === id);
        expect(JSON.parse(ev.data)).toMatchObject({ id, status: 404, key: 'editor' });
      } finally {
        sub.close();
      }
    });

    it('stops sending to a subscriber that went away', async () => {
      const sub = await subscribe(port, token);
      sub.close();
      await new Promise((r) => setTimeout(r, 100));
      // The gateway must survive writing nowhere; a fresh subscriber still gets events.
      const again = await subscribe(port, token);
      try {
        const made = await chat(t, t.keys.editor, 'after a subscriber left');
        await again.next((e) => e.event === 'call' && (JSON.parse(e.data) as { id: string }).id === made.id);
      } finally {
        again.close();
      }
    });
  });
});

describe('admin API with corsOrigins configured', () => {
  const allowed = 'http://app.example:5173';
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ settings: { corsOrigins: [allowed] } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('still refuses that origin on /admin with the right token, while /v1 lets it in', async () => {
    const admin = await raw(t.gw.port, { path: '/admin/snapshot', headers: { authorization: `Bearer ${t.gw.adminToken}`, origin: allowed } });
    expect(admin.status).toBe(403);
    expect(admin.body.error.code).toBe('origin_not_allowed');
    expect(admin.headers['access-control-allow-origin']).toBeUndefined();

    const v1 = await raw(t.gw.port, { path: '/v1/models', headers: { authorization: `Bearer ${t.key}`, origin: allowed } });
    expect(v1.status).toBe(200);
    expect(v1.headers['access-control-allow-origin']).toBe(allowed);
  });
});
