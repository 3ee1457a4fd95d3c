/**
 * Localhost hardening against a real gateway: the `Host` check (DNS rebinding), the Origin check and
 * CORS, and the file modes of the data home and the admin token. Requests go through node:http so the
 * `Host` and `Origin` headers can be set freely (fetch would refuse or rewrite them).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../core/gateway/app.ts';
import { MemorySecretStore } from '../../core/secrets/secret-store.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: () => { error?: { message: string; type: string; param: string | null; code: string | null } } & Record<string, unknown>;
}

/** One request to 127.0.0.1:port with exactly the headers given (Host included). */
function raw(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers ?? {}, agent: false, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.end(opts.body);
  });
}

const corsHeaderNames = (h: IncomingHttpHeaders): string[] => Object.keys(h).filter((n) => n.startsWith('access-control-'));

let up: FakeUpstream;
beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
});
afterAll(async () => {
  await up?.close();
});

describe('Host header (DNS rebinding guard), default settings', () => {
  let t: TestGateway;
  let port: number;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestGateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-upstream-secret-123456789' }] });
    port = t.gw.port;
    auth = { authorization: `Bearer ${t.key}` };
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(['evil.example', 'evil.example:PORT', 'localhost.evil.example:PORT', '127.0.0.1.evil.example:PORT', '192.168.1.20:PORT', 'EVIL.example'])(
    'refuses Host: %s with 403 host_not_allowed, even with a valid key',
    async (host) => {
      const r = await raw(port, { path: '/v1/models', headers: { host: host.replace('PORT', String(port)), ...auth } });
      expect(r.status).toBe(403);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.json().error).toMatchObject({ type: 'invalid_request_error', code: 'host_not_allowed' });
      expect(r.json().error?.message).toMatch(/allowedHosts/);
      expect(r.text).not.toContain('gpt-4o-mini');
    },
  );

  it('refuses a foreign Host on a model call before the upstream is reached', async () => {
    const before = up.requests.length;
    const r = await raw(port, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { host: `evil.example:${port}`, 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(403);
    expect(r.json().error?.code).toBe('host_not_allowed');
    expect(up.requests.length).toBe(before);
  });

  it('refuses a foreign Host or Origin on /v1/messages in Anthropic\'s envelope, which Claude Code reads', async () => {
    const cases: Array<Record<string, string>> = [{ host: `evil.example:${port}` }, { host: `localhost:${port}`, origin: 'https://evil.example' }];
    for (const headers of cases) {
      const r = await raw(port, {
        method: 'POST',
        path: '/v1/messages',
        headers: { ...headers, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': t.key },
        body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(r.status).toBe(403);
      expect(r.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
      expect(r.json().error?.message).toMatch(headers.origin ? /corsOrigins/ : /allowedHosts/);
      expect(r.headers['request-id']).toMatch(/^req_/);
    }
  });

  it('refuses a foreign Host on the admin API, even with the admin token', async () => {
    const r = await raw(port, { path: '/admin/snapshot', headers: { host: 'evil.example', authorization: `Bearer ${t.gw.adminToken}` } });
    expect(r.status).toBe(403);
    expect(r.json().error?.code).toBe('host_not_allowed');
  });

  it('refuses a request without any Host header', async () => {
    // node:http itself answers an HTTP/1.1 request without Host with 400; either way nothing is served.
    const r = await raw(port, { path: '/v1/models', headers: { ...auth } });
    expect([400, 403]).toContain(r.status);
    expect(r.text).not.toContain('gpt-4o-mini');
  });

  it.each(['localhost:PORT', '127.0.0.1:PORT', 'localhost', '127.0.0.1', '[::1]:PORT', 'LocalHost:PORT'])('accepts Host: %s', async (host) => {
    const r = await raw(port, { path: '/v1/models', headers: { host: host.replace('PORT', String(port)), ...auth } });
    expect(r.status).toBe(200);
    const body = r.json() as { data: Array<{ id: string }> };
    expect(body.data.map((m) => m.id)).toContain('gpt-4o-mini');
  });
});

describe('Host header with allowedHosts configured', () => {
  let t: TestGateway;
  let port: number;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestGateway({
      providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-upstream-secret-123456789' }],
      settings: { allowedHosts: ['gateway.lan', 'Devbox.Example', 'pinned.lan:4141'] },
    });
    port = t.gw.port;
    auth = { authorization: `Bearer ${t.key}` };
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(['gateway.lan', 'gateway.lan:PORT', 'devbox.example:PORT', 'localhost:PORT', 'pinned.lan:4141'])('accepts Host: %s', async (host) => {
    const r = await raw(port, { path: '/v1/models', headers: { host: host.replace('PORT', String(port)), ...auth } });
    expect(r.status).toBe(200);
  });

  it.each(['other.lan:PORT', 'sub.gateway.lan:PORT', 'gateway.lan.evil.example', 'pinned.lan:4142', 'pinned.lan'])('still refuses Host: %s', async (host) => {
    const r = await raw(port, { path: '/v1/models', headers: { host: host.replace('PORT', String(port)), ...auth } });
    expect(r.status).toBe(403);
    expect(r.json().error?.code).toBe('host_not_allowed');
  });
});

describe('Origin and CORS, no corsOrigins configured', () => {
  let t: TestGateway;
  let port: number;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestGateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-upstream-secret-123456789' }] });
    port = t.gw.port;
    auth = { authorization: `Bearer ${t.key}` };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('sends no CORS headers to a request without Origin', async () => {
    const r = await raw(port, { path: '/v1/models', headers: { host: `127.0.0.1:${port}`, ...auth } });
    expect(r.status).toBe(200);
    expect(corsHeaderNames(r.headers)).toEqual([]);
  });

  it('sends no CORS headers to a same-origin request (the dashboard page needs none)', async () => {
    const r = await raw(port, { path: '/v1/models', headers: { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, ...auth } });
    expect(r.status).toBe(200);
    expect(corsHeaderNames(r.headers)).toEqual([]);
  });

  it.each(['https://evil.example', 'http://localhost:3000', 'null'])('refuses Origin: %s with 403 origin_not_allowed and no CORS headers', async (origin) => {
    const r = await raw(port, { path: '/v1/models', headers: { host: `127.0.0.1:${port}`, origin, ...auth } });
    expect(r.status).toBe(403);
    expect(r.json().error).toMatchObject({ type: 'invalid_request_error', code: 'origin_not_allowed' });
    expect(corsHeaderNames(r.headers)).toEqual([]);
  });

  it('answers a foreign preflight with 403 and no CORS headers', async () => {
    const r = await raw(port, {
      method: 'OPTIONS',
      path: '/v1/chat/completions',
      headers: { host: `127.0.0.1:${port}`, origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(r.status).toBe(403);
    expect(corsHeaderNames(r.headers)).toEqual([]);
  });

  it('refuses a foreign Origin on a model call before the upstream is reached', async () => {
    const before = up.requests.length;
    const r = await raw(port, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { host: `127.0.0.1:${port}`, origin: 'https://evil.example', 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(403);
    expect(r.json().error?.code).toBe('origin_not_allowed');
    expect(up.requests.length).toBe(before);
  });
});

describe('CORS with corsOrigins configured', () => {
  const allowed = 'http://app.example:5173';
  let t: TestGateway;
  let port: number;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestGateway({
      providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini'], secret: 'sk-upstream-secret-123456789' }],
      settings: { corsOrigins: [allowed] },
    });
    port = t.gw.port;
    auth = { authorization: `Bearer ${t.key}` };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a preflight from that origin with access-control-allow-origin', async () => {
    const r = await raw(port, {
      method: 'OPTIONS',
      path: '/v1/chat/completions',
      headers: { host: `127.0.0.1:${port}`, origin: allowed, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(r.status).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe(allowed);
    expect(r.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(r.headers['access-control-allow-headers']).toMatch(/authorization/);
    expect(r.headers['access-control-allow-headers']).toMatch(/content-type/);
    expect(r.headers.vary).toMatch(/Origin/);
  });

  it('lets the Anthropic SDK through its preflight, and exposes the headers the SDKs read', async () => {
    const asked = ['x-api-key', 'anthropic-version', 'anthropic-beta', 'anthropic-dangerous-direct-browser-access', 'x-stainless-async'];
    const r = await raw(port, {
      method: 'OPTIONS',
      path: '/v1/messages',
      headers: { host: `127.0.0.1:${port}`, origin: allowed, 'access-control-request-method': 'POST', 'access-control-request-headers': asked.join(', ') },
    });
    expect(r.status).toBe(204);
    const allowedHeaders = String(r.headers['access-control-allow-headers']).split(/,\s*/);
    for (const h of asked) expect(allowedHeaders).toContain(h);
    const exposed = String(r.headers['access-control-expose-headers']).split(/,\s*/);
    for (const h of ['request-id', 'x-should-retry', 'retry-after-ms', 'retry-after']) expect(exposed).toContain(h);
  });

  it('puts the CORS headers on the actual request too, exposing x-request-id', async () => {
    const r = await raw(port, { path: '/v1/models', headers: { host: `127.0.0.1:${port}`, origin: allowed, ...auth } });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBe(allowed);
    expect(r.headers['access-control-expose-headers']).toMatch(/x-request-id/);
  });

  it('puts the CORS headers on an error answer, so the page can read it', async () => {
    const r = await raw(port, { path: '/v1/models', headers: { host: `127.0.0.1:${port}`, origin: allowed, authorization: 'Bearer sk-gw-wrong' } });
    expect(r.status).toBe(401);
    expect(r.headers['access-control-allow-origin']).toBe(allowed);
  });

  it('still refuses another origin', async () => {
    const r = await raw(port, {
      method: 'OPTIONS',
      path: '/v1/chat/completions',
      headers: { host: `127.0.0.1:${port}`, origin: 'http://app.example:9999', 'access-control-request-method': 'POST' },
    });
    expect(r.status).toBe(403);
    expect(r.json().error?.code).toBe('origin_not_allowed');
    expect(corsHeaderNames(r.headers)).toEqual([]);
  });

  it('does not let a configured origin through a foreign Host', async () => {
    const r = await raw(port, { path: '/v1/models', headers: { host: 'evil.example', origin: allowed, ...auth } });
    expect(r.status).toBe(403);
    expect(r.json().error?.code).toBe('host_not_allowed');
  });
});

describe.runIf(process.platform !== 'win32')('file modes in the data home', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'gw-modes-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const mode = (p: string) => statSync(p).mode & 0o777;

  it('creates the data home 0700 and the admin token 0600, even under a permissive umask', async () => {
    const home = path.join(scratch, 'fresh', 'home');
    const saved = process.umask(0o002);
    let gw: Awaited<ReturnType<typeof startGateway>> | undefined;
    try {
      gw = await startGateway({ home, port: 0, host: '127.0.0.1', secretStore: async () => new MemorySecretStore(), skipDiscovery: true });
    } finally {
      process.umask(saved);
    }
    try {
      expect(mode(home)).toBe(0o700);
      const tokenFile = path.join(home, 'admin-token');
      expect(mode(tokenFile)).toBe(0o600);
      expect(readFileSync(tokenFile, 'utf8').trim()).toBe(gw.adminToken);
      expect(gw.adminToken.length).toBeGreaterThanOrEqual(32);
    } finally {
      await gw.close();
    }
  });

  it('tightens an existing admin token file to 0600 and keeps the token', async () => {
    const home = path.join(scratch, 'existing');
    const first = await startGateway({ home, port: 0, host: '127.0.0.1', secretStore: async () => new MemorySecretStore(), skipDiscovery: true });
    const token = first.adminToken;
    await first.close();
    const tokenFile = path.join(home, 'admin-token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o644 });
    chmodSync(tokenFile, 0o644);
    const second = await startGateway({ home, port: 0, host: '127.0.0.1', secretStore: async () => new MemorySecretStore(), skipDiscovery: true });
    try {
      expect(second.adminToken).toBe(token);
      expect(mode(tokenFile)).toBe(0o600);
    } finally {
      await second.close();
    }
  });

  it('replaces a too-short admin token with a strong one', async () => {
    const home = path.join(scratch, 'weak');
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(path.join(home, 'admin-token'), 'short\n', { mode: 0o644 });
    const gw = await startGateway({ home, port: 0, host: '127.0.0.1', secretStore: async () => new MemorySecretStore(), skipDiscovery: true });
    try {
      expect(gw.adminToken).not.toBe('short');
      expect(gw.adminToken.length).toBeGreaterThanOrEqual(32);
      expect(readFileSync(path.join(home, 'admin-token'), 'utf8').trim()).toBe(gw.adminToken);
      expect(mode(path.join(home, 'admin-token'))).toBe(0o600);
    } finally {
      await gw.close();
    }
  });
});
