/**
 * What a started gateway keeps loaded: not Node's bundled undici (fetch, WebSocket), not the parts of the
 * npm undici the transport does not use, and no Intl formatter. Each cost several MiB of idle RSS and was
 * loaded by an accident of the code (an ESM import of node:http, undici's index, a fetch to itself).
 * Checked in a fresh process that starts a gateway and serves one call, as `gateway start` does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const home = mkdtempSync(path.join(tmpdir(), 'gw-footprint-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('a started gateway', () => {
  it('loads neither Node’s fetch nor undici’s, nor an Intl formatter', () => {
    const script = `
      import { createRequire } from 'node:module';
      import { startGateway } from ${JSON.stringify(path.join(root, 'core/gateway/app.ts'))};
      let intl = 0;
      for (const name of ['DateTimeFormat', 'NumberFormat', 'Collator']) {
        const Real = Intl[name];
        Intl[name] = function (...a) { intl++; return new Real(...a); };
      }
      const gw = await startGateway({ home: ${JSON.stringify(home)}, port: 0, host: '127.0.0.1', demo: true, skipDiscovery: true, secretStore: async () => null });
      const link = gw.loginLink(60_000);
      const res = await new Promise((resolve, reject) => {
        const { request } = createRequire(import.meta.url)('node:http');
        const req = request(gw.baseUrl + '/chat/completions', { method: 'POST', headers: { authorization: 'Bearer ' + gw.createdKey.secret, 'content-type': 'application/json' } }, (r) => {
          r.resume();
          r.on('end', () => resolve(r.statusCode));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] }));
      });
      const cached = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({
        status: res,
        link,
        nodeUndici: process.moduleLoadList.filter((m) => m.includes('undici')),
        npmUndiciWeb: cached.filter((f) => /[\\\\/]undici[\\\\/]lib[\\\\/](web|mock|cache)[\\\\/]/.test(f)).length,
        npmUndiciAgent: cached.some((f) => /[\\\\/]undici[\\\\/]lib[\\\\/]dispatcher[\\\\/]agent\\.js$/.test(f)),
        intl,
      }));
      await gw.close();
    `;
    // A file, not --eval: worker threads inherit the flags, and the audit thread must start as it does in a server.
    const file = path.join(home, 'probe.mjs');
    writeFileSync(file, script);
    const r = spawnSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    expect(out.status).toBe(200);
    expect(out.link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ui\/#login=gwcode-/);
    expect(out.nodeUndici).toEqual([]);
    expect(out.npmUndiciWeb).toBe(0);
    expect(out.npmUndiciAgent).toBe(true);
    expect(out.intl).toBe(0);
  });
});
