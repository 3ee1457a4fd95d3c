/**
 * `gateway providers test [NAME]`: a real check of each provider (reachable, key accepted, one tiny
 * call) with a verdict in plain words. Checked through `testProviders` against fake upstreams with
 * faults, and once through the real CLI process (exit code, JSON and plain output).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testProviders } from '../../cli/commands/provider-test.ts';
import type { ProviderVerdict } from '../../cli/commands/provider-test.ts';
import type { NewProvider } from '../../core/storage/providers-repo.ts';
import { Store } from '../../core/storage/index.ts';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';

const GOOD_KEY = 'sk-good-upstream-0123456789abcdef';
const WRONG_KEY = 'sk-wrong-upstream-0123456789abcdef';
const ENV = {
  good: 'GW_PT_GOOD_KEY',
  wrong: 'GW_PT_WRONG_KEY',
  missing: 'GW_PT_MISSING_KEY',
} as const;
const CLI = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));

let home: string;
let store: Store;
let ok: FakeUpstream;
let broken: FakeUpstream;
let garbled: FakeUpstream;
let unlisted: FakeUpstream;
let anthropic: FakeUpstream;
let deadPort: number;

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const provider = (p: Partial<NewProvider> & Pick<NewProvider, 'name' | 'baseUrl'>): NewProvider => ({
  type: 'openai',
  preset: null,
  models: null,
  priority: 100,
  keyEnv: ENV.good,
  keySource: 'env',
  options: {},
  ...p,
});

beforeAll(async () => {
  process.env[ENV.good] = GOOD_KEY;
  process.env[ENV.wrong] = WRONG_KEY;
  delete process.env[ENV.missing];
  ok = await startOpenAIUpstream({ models: ['text-embedding-3-small', 'gpt-4o-mini'], requireKey: GOOD_KEY });
  broken = await startOpenAIUpstream({ models: ['gpt-4o-mini'], requireKey: GOOD_KEY });
  broken.setDefaultFault({ kind: 'status', status: 500 });
  garbled = await startOpenAIUpstream({ models: ['gpt-4o-mini'], requireKey: GOOD_KEY });
  garbled.setDefaultFault({ kind: 'malformed' });
  unlisted = await startOpenAIUpstream({ models: ['gpt-4o-mini'], requireKey: GOOD_KEY });
  anthropic = await startAnthropicUpstream({ models: ['claude-haiku-4-5-20251001'], requireKey: GOOD_KEY });
  deadPort = await closedPort();

  home = mkdtempSync(path.join(tmpdir(), 'gw-provtest-'));
  store = Store.open(home);
  store.providers.add(provider({ name: 'good', baseUrl: ok.url }));
  store.providers.add(provider({ name: 'wrongkey', baseUrl: ok.url, keyEnv: ENV.wrong, models: ['gpt-4o-mini'] }));
  // Listing with the wrong key fails too: the verdict must still say "reachable, key refused".
  store.providers.add(provider({ name: 'wrongkey-listed', baseUrl: unlisted.url, keyEnv: ENV.wrong }));
  store.providers.add(provider({ name: 'nokey', baseUrl: ok.url, keyEnv: ENV.missing }));
  store.providers.add(provider({ name: 'down', baseUrl: `http://127.0.0.1:${deadPort}/v1`, models: ['gpt-4o-mini'] }));
  store.providers.add(provider({ name: 'failing', baseUrl: broken.url, models: ['gpt-4o-mini'] }));
  store.providers.add(provider({ name: 'garbled', baseUrl: garbled.url, models: ['gpt-4o-mini'] }));
  store.providers.add(provider({ name: 'claude', type: 'anthropic', baseUrl: anthropic.url }));
  store.providers.add(provider({ name: 'demo', type: 'demo', baseUrl: 'http://127.0.0.1:9/v1', keySource: 'none', keyEnv: null, models: ['demo-chat', 'demo-embedding'] }));
});

afterAll(async () => {
  store?.close();
  for (const up of [ok, broken, garbled, unlisted, anthropic]) await up?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  for (const v of Object.values(ENV)) delete process.env[v];
});

describe('testProviders', () => {
  let results: Map<string, ProviderVerdict>;
  beforeAll(async () => {
    const list = await testProviders(store, home);
    results = new Map(list.map((r) => [r.provider, r]));
  });

  it('checks every provider once', () => {
    expect([...results.keys()].sort()).toEqual(['claude', 'demo', 'down', 'failing', 'garbled', 'good', 'nokey', 'wrongkey', 'wrongkey-listed']);
  });

  it('a working provider: reachable, key accepted, a tiny call to a chat model answered', () => {
    const r = results.get('good')!;
    expect(r.ok).toBe(true);
    // The listing's first entry is an embedding model: the tiny call picks the chat model.
    expect(r.model).toBe('gpt-4o-mini');
    expect(r.verdict).toMatch(/^reachable, key accepted, a tiny call to gpt-4o-mini answered in \d+ ms\.$/);
    expect(r.latency_ms).toBeTypeOf('number');
    // It was a real call, with the provider's key.
    const chat = ok.requests.find((q) => q.method === 'POST' && q.path === '/v1/chat/completions' && q.headers.authorization === `Bearer ${GOOD_KEY}`);
    expect(chat).toBeDefined();
  });

  it('a native adapter (Anthropic) is checked with its own protocol', () => {
    const r = results.get('claude')!;
    expect(r).toMatchObject({ ok: true, model: 'claude-haiku-4-5-20251001' });
    expect(anthropic.requests.some((q) => q.method === 'POST' && q.path === '/v1/messages' && q.headers['x-api-key'] === GOOD_KEY)).toBe(true);
  });

  it('the demo provider answers locally', () => {
    expect(results.get('demo')).toMatchObject({ ok: true, model: 'demo-chat' });
    expect(results.get('demo')!.verdict).not.toMatch(/key/);
  });

  it('a refused key is named as such, and the key never appears', () => {
    for (const name of ['wrongkey', 'wrongkey-listed']) {
      const r = results.get(name)!;
      expect(r.ok).toBe(false);
      expect(r.verdict).toMatch(/^reachable, but the key was refused/);
      expect(r.verdict).toMatch(/401/);
      expect(r.verdict).not.toContain(WRONG_KEY);
    }
  });

  it('a missing key says which variable to set', () => {
    const r = results.get('nokey')!;
    expect(r.ok).toBe(false);
    expect(r.verdict).toBe(`no key: $${ENV.missing} is not set in this shell.`);
  });

  it('a closed port is "not reachable"', () => {
    const r = results.get('down')!;
    expect(r.ok).toBe(false);
    expect(r.verdict).toMatch(/^not reachable: .*ECONNREFUSED/);
  });

  it('a provider that answers 500 is reachable but its tiny call failed', () => {
    const r = results.get('failing')!;
    expect(r.ok).toBe(false);
    expect(r.verdict).toMatch(/^reachable, but a tiny call to gpt-4o-mini failed \(HTTP 500/);
  });

  it('an unreadable answer is not mistaken for a connection problem', () => {
    const r = results.get('garbled')!;
    expect(r.ok).toBe(false);
    expect(r.verdict).toMatch(/^reachable, but the answer to a tiny call to gpt-4o-mini could not be read/);
  });

  it('NAME limits the check to one provider', async () => {
    const before = broken.requests.length;
    const only = await testProviders(store, home, 'good');
    expect(only.map((r) => r.provider)).toEqual(['good']);
    expect(broken.requests.length).toBe(before);
  });
});

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, GATEWAY_HOME: home }, timeout: 20_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('the CLI command', () => {
  it('`providers test NAME --json` prints the verdict and exits 0 when it passes', async () => {
    const r = await runCli(['providers', 'test', 'good', '--json']);
    expect(r.code).toBe(0);
    const parsed = JSON.parse(r.stdout) as ProviderVerdict[];
    expect(parsed).toHaveLength(1);
    expect(parsed[0]).toMatchObject({ provider: 'good', ok: true, model: 'gpt-4o-mini' });
  });

  it('plain output, one line per provider, exit 1 when one fails', async () => {
    const r = await runCli(['providers', 'test', 'down']);
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toMatch(/^FAIL down: not reachable: /);
  });

  it('an unknown NAME is an error that says where to look', async () => {
    const r = await runCli(['providers', 'test', 'nosuch']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/nosuch/);
    expect(r.stderr).toMatch(/providers list/);
  });
});
