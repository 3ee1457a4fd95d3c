/**
 * The dashboard's static files under `/ui` on a real gateway: content types, the security headers
 * (CSP, frame denial, no-cache), 404 for unknown names, every traversal spelling refused, only GET/HEAD,
 * ETag revalidation, and the server's Host and Origin checks still in front. Also: the React vendor
 * module is a valid ES module that exports React and ReactDOM's client.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../core/ui/ui-handler.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A request with the path sent exactly as written (no normalisation of `..` or `%2e`). */
function raw(port: number, opts: { method?: string; path: string; headers?: Record<string, string> }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: { host: `127.0.0.1:${port}`, ...opts.headers }, agent: false, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.end();
  });
}

const EXPECTED_CSP_PARTS = ["default-src 'self'", "connect-src 'self'", "img-src 'self' data:", "style-src 'self'", "script-src 'self'"];

describe('the dashboard files under /ui', () => {
  let t: TestGateway;
  let port: number;
  beforeAll(async () => {
    t = await startTestGateway({ demo: true });
    port = t.gw.port;
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['/ui', 'text/html; charset=utf-8'],
    ['/ui/', 'text/html; charset=utf-8'],
    ['/ui/index.html', 'text/html; charset=utf-8'],
    ['/ui/app.js', 'text/javascript; charset=utf-8'],
    ['/ui/style.css', 'text/css; charset=utf-8'],
    ['/ui/vendor/react.js', 'text/javascript; charset=utf-8'],
  ])('%s is served as %s with the security headers', async (p, type) => {
    const r = await raw(port, { path: p });
    expect(r.status, r.text.slice(0, 200)).toBe(200);
    expect(r.headers['content-type']).toBe(type);
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toBe(CONTENT_SECURITY_POLICY);
    for (const part of EXPECTED_CSP_PARTS) expect(csp).toContain(part);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text));
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('the page holds no secret and loads only same-origin files', async () => {
    const r = await raw(port, { path: '/ui' });
    expect(r.text).not.toContain(t.gw.adminToken);
    expect(r.text).toContain('src="/ui/app.js"');
    expect(r.text).toContain('href="/ui/style.css"');
    expect(r.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script (the CSP would block it)
    expect(r.text).not.toMatch(/https?:\/\//);
    for (const p of ['/ui/app.js', '/ui/style.css']) {
      const f = await raw(port, { path: p });
      expect(f.text).not.toContain(t.gw.adminToken);
      expect(f.text).not.toMatch(/https?:\/\//);
    }
  });

  it('HEAD answers the headers without a body; other methods get 405', async () => {
    const head = await raw(port, { method: 'HEAD', path: '/ui/app.js' });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(head.text).toBe('');
    const post = await raw(port, { method: 'POST', path: '/ui/app.js' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(JSON.parse(post.text).error.code).toBe('method_not_allowed');
  });

  it('revalidates with the ETag (304)', async () => {
    const first = await raw(port, { path: '/ui/style.css' });
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^".+"$/);
    const again = await raw(port, { path: '/ui/style.css', headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  });

  it('answers 404 (JSON envelope, still with the CSP) for unknown files', async () => {
    for (const p of ['/ui/nope.js', '/ui/vendor/react-dom.js', '/ui/vendor/', '/ui/APP.JS', '/uix', '/ui.html']) {
      const r = await raw(port, { path: p });
      expect(r.status, p).toBe(404);
      expect(r.headers['content-type'], p).toBe('application/json');
      expect(JSON.parse(r.text).error.type, p).toBe('invalid_request_error');
    }
    const r = await raw(port, { path: '/ui/nope.js' });
    expect(r.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  });

  it('refuses every directory-traversal spelling', async () => {
    const attempts = [
      '/ui/../package.json',
      '/ui/../../package.json',
      '/ui/..%2fpackage.json',
      '/ui/..%2F..%2Fpackage.json',
      '/ui/%2e%2e/%2e%2e/package.json',
      '/ui/%2E%2E%2Fadmin-token',
      '/ui/..\\..\\package.json',
      '/ui/..%5c..%5cpackage.json',
      '/ui/vendor/../../package.json',
      '/ui/static/index.html',
      '/ui/ui-handler.ts',
      '/ui/react-vendor.ts',
      '/ui//etc/passwd',
      '/ui/%2fetc%2fpasswd',
      '/ui/app.js%00.html',
      `/ui/../${path.basename(t.home)}/admin-token`,
      '/ui/./app.js',
    ];
    for (const p of attempts) {
      const r = await raw(port, { path: p });
      expect(r.status, p).toBe(404);
      expect(r.text, p).not.toContain(t.gw.adminToken);
      expect(r.text, p).not.toContain('"name": "gateway-local"');
    }
  });

  it('the Host check still applies (DNS rebinding), and a foreign Origin is refused', async () => {
    const badHost = await raw(port, { path: '/ui', headers: { host: `evil.example:${port}` } });
    expect(badHost.status).toBe(403);
    expect(JSON.parse(badHost.text).error.code).toBe('host_not_allowed');
    expect(badHost.text).not.toContain('<html');
    const rebind = await raw(port, { path: '/ui/app.js', headers: { host: 'attacker.test' } });
    expect(rebind.status).toBe(403);
    const origin = await raw(port, { path: '/ui', headers: { origin: 'http://evil.example' } });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.text).error.code).toBe('origin_not_allowed');
    // Loopback names are fine.
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const ok = await raw(port, { path: '/ui', headers: { host } });
      expect(ok.status, host).toBe(200);
    }
  });

  it('the admin API still needs the token when called like the page does', async () => {
    const none = await raw(port, { path: '/admin/snapshot' });
    expect(none.status).toBe(401);
    const ok = await raw(port, { path: '/admin/snapshot', headers: { authorization: `Bearer ${t.gw.adminToken}`, origin: `http://127.0.0.1:${port}` } });
    expect(ok.status).toBe(200);
  });

  it('the React vendor module is one valid ES module exporting React and ReactDOM client', async () => {
    const r = await raw(port, { path: '/ui/vendor/react.js' });
    expect(r.text).not.toMatch(/\bimport\s*\(|^import\s/m); // self-contained: nothing more to fetch
    expect(r.text).not.toContain('process.env');
    const dir = mkdtempSync(path.join(tmpdir(), 'gw-ui-vendor-'));
    try {
      const file = path.join(dir, 'react.mjs');
      writeFileSync(file, r.text);
      const mod = (await import(pathToFileURL(file).href)) as { React: { version: string; createElement: unknown }; ReactDOMClient: { createRoot: unknown }; default: unknown };
      expect(mod.React.version).toMatch(/^19\./);
      expect(typeof mod.React.createElement).toBe('function');
      expect(typeof mod.ReactDOMClient.createRoot).toBe('function');
      expect(mod.default).toBe(mod.React);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('createUiHandler with its own folder', () => {
  it('serves only regular files of known types directly in the folder', async () => {
    const { createServer } = await import('node:http');
    const { createUiHandler } = await import('../../core/ui/ui-handler.ts');
    const dir = mkdtempSync(path.join(tmpdir(), 'gw-ui-static-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(path.join(dir, 'app.js'), 'export {};');
    writeFileSync(path.join(dir, '.hidden.js'), 'secret');
    writeFileSync(path.join(dir, 'notes.txt'), 'secret');
    writeFileSync(path.join(dir, 'token.key'), 'secret');
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'sub', 'inner.js'), 'secret');
    const handler = createUiHandler({ staticDir: dir });
    const server = createServer((req, res) => void handler(req, res, (req.url ?? '/').split('?')[0]));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      expect((await raw(port, { path: '/ui' })).status).toBe(200);
      expect((await raw(port, { path: '/ui/app.js?v=1' })).status).toBe(200);
      for (const p of ['/ui/.hidden.js', '/ui/notes.txt', '/ui/token.key', '/ui/sub/inner.js', '/ui/sub', '/ui/../notes.txt']) {
        const r = await raw(port, { path: p });
        expect(r.status, p).toBe(404);
        expect(r.text, p).not.toContain('secret');
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
