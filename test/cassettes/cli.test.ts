/**
 * The CLI side of record and replay, run as a user would: a small app test suite (node:test + the
 * `openai` SDK, `fixtures/offline-suite.mjs`) is recorded once through a fake upstream, then runs
 * offline with `gateway run --replay DIR -- CMD` (its own gateway, or a running one: the run's key
 * carries the cassette), against `gateway start --replay DIR` and against a gateway given the cassette
 * by the environment (`GATEWAY_CASSETTE_MODE`/`_DIR`); `gateway logs --json`
 * marks those calls `replayed`; `gateway cassettes list|show|prune` read and trim the directory.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../core/storage/index.ts';
import { CLI_TEST_TIMEOUT_MS, REPO_ROOT, runCli, startCli, tempHome, waitForBaseUrl } from '../support/cli.ts';
import type { RunningCli } from '../support/cli.ts';
import { cassetteGateway, startUpstreams, tempDir } from './rig.ts';

const SUITE = path.join(REPO_ROOT, 'test', 'cassettes', 'fixtures', 'offline-suite.mjs');

function runSuite(baseUrl: string, apiKey: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: apiKey, NO_PROXY: '127.0.0.1,localhost' };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', SUITE], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

const cassette = tempDir('gw-cli-cassette-');
const cleanups: Array<() => void> = [cassette.cleanup];
const running: RunningCli[] = [];
let deadUrl = '';

/** A data home with one key and a provider whose upstream is gone: only a cassette can answer. */
function offlineHome(): { home: string; key: string } {
  const h = tempHome();
  cleanups.push(h.cleanup);
  const store = Store.open(h.home);
  try {
    store.providers.add({
      name: 'oa',
      type: 'openai',
      preset: null,
      baseUrl: deadUrl,
      models: ['gpt-4o-mini', 'text-embedding-3-small'],
      priority: 100,
      keyEnv: null,
      keySource: 'none',
      options: {},
    });
    return { home: h.home, key: store.keys.create({ name: 'suite' }).secret };
  } finally {
    store.close();
  }
}

beforeAll(async () => {
  const up = await startUpstreams();
  deadUrl = up.chat.url;
  const t = await cassetteGateway(up, { mode: 'record', dir: cassette.dir });
  try {
    const recorded = await runSuite(t.baseUrl, t.key);
    expect(recorded.out).toMatch(/# pass 3/);
    expect(recorded.code).toBe(0);
  } finally {
    await t.close();
    await up.close();
  }
}, 90_000);

afterAll(async () => {
  for (const r of running) await r.stop('SIGKILL');
  for (const c of cleanups) c();
});

describe('a test suite runs offline from the cassette', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('gateway start --replay DIR', async () => {
    const { home, key } = offlineHome();
    const gw = startCli(['start', '--no-tui', '--port', '0', '--replay', cassette.dir], { home });
    running.push(gw);
    const baseUrl = await waitForBaseUrl(home);
    await gw.waitFor(new RegExp(`Cassette: replay ${cassette.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), 'stderr');
    const run = await runSuite(baseUrl, key);
    expect(run.out).toMatch(/# pass 3/);
    expect(run.code).toBe(0);

    // A request the suite never made is a miss that names itself.
    const miss = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'not in the suite' }] }),
    });
    expect(miss.status).toBe(404);
    expect(miss.headers.get('x-should-retry')).toBe('false');
    expect(((await miss.json()) as { error: { code: string } }).error.code).toBe('cassette_miss');
    await gw.stop('SIGTERM');

    const logs = await runCli(['logs', '--json'], { home });
    const rows = logs.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { replayed: boolean; status: number; cost_usd: number | null });
    expect(rows).toHaveLength(4);
    expect(rows.filter((r) => r.replayed && r.status === 200 && r.cost_usd === 0)).toHaveLength(3);
    expect(rows.filter((r) => !r.replayed && r.status === 404)).toHaveLength(1);
    const lines = await runCli(['logs'], { home });
    expect(lines.stdout.split('\n').filter((l) => l.includes(' $0 (replayed) '))).toHaveLength(3);
  });

  it('gateway run --replay DIR -- CMD: a gateway of its own, offline', async () => {
    const { home } = offlineHome();
    const run = await runCli(['run', '--replay', cassette.dir, '--', process.execPath, '--test', '--test-reporter=tap', SUITE], { home, timeoutMs: 80_000 });
    expect(run.stdout).toMatch(/# pass 3/);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/gateway run: 3 calls, \d+ input \+ \d+ output tokens, \$0\.000000;/);
    const rows = (await runCli(['logs', '--json'], { home })).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { replayed: boolean });
    expect(rows.filter((r) => r.replayed)).toHaveLength(3);
  });

  it('gateway run --replay DIR -- CMD beside a running gateway that has no cassette: the run key carries it', async () => {
    const { home, key } = offlineHome();
    const gw = startCli(['start', '--no-tui', '--port', '0'], { home });
    running.push(gw);
    const baseUrl = await waitForBaseUrl(home);
    const run = await runCli(['run', '--replay', cassette.dir, '--', process.execPath, '--test', '--test-reporter=tap', SUITE], { home, timeoutMs: 80_000 });
    expect(run.stdout).toMatch(/# pass 3/);
    expect(run.code).toBe(0);
    // The gateway's other keys still go to the (dead) provider: only the run was replayed.
    const direct = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'suite question' }] }),
    });
    expect(direct.status).toBe(502);
    expect(direct.headers.get('x-gateway-replayed')).toBeNull();
    await gw.stop('SIGTERM');
    const both = await runCli(['run', '--replay', cassette.dir, '--record', cassette.dir, '--', 'true'], { home });
    expect(both.code).toBe(2);
  });

  it('GATEWAY_CASSETTE_MODE / GATEWAY_CASSETTE_DIR in the environment of `gateway start`', async () => {
    const { home, key } = offlineHome();
    const gw = startCli(['start', '--no-tui', '--port', '0'], { home, env: { GATEWAY_CASSETTE_MODE: 'replay', GATEWAY_CASSETTE_DIR: cassette.dir } });
    running.push(gw);
    const baseUrl = await waitForBaseUrl(home);
    await gw.waitFor(new RegExp(`Cassette: replay ${cassette.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), 'stderr');
    const run = await runSuite(baseUrl, key);
    expect(run.out).toMatch(/# pass 3/);
    expect(run.code).toBe(0);
    await gw.stop('SIGTERM');
  });

  it('refuses two modes at once, and a bad mode in the environment', async () => {
    const { home } = offlineHome();
    const both = await runCli(['start', '--no-tui', '--port', '0', '--replay', cassette.dir, '--record', cassette.dir], { home });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Choose one of --record, --replay and --replay-or-record');
    const bad = await runCli(['start', '--no-tui', '--port', '0'], { home, env: { GATEWAY_CASSETTE_MODE: 'rewind', GATEWAY_CASSETTE_DIR: cassette.dir } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('GATEWAY_CASSETTE_MODE must be one of record, replay, replay-or-record');
  });
});

describe('gateway cassettes', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('list, show and prune', async () => {
    const { home } = offlineHome();
    const list = await runCli(['cassettes', 'list', cassette.dir, '--json'], { home });
    expect(list.code).toBe(0);
    const inv = JSON.parse(list.stdout) as {
      entries: Array<{ file: string; endpoint: string; model: string; answers: number; stream: boolean; used_in_last_run: boolean | null; recorded_cost_usd: number | null }>;
    };
    expect(inv.entries.map((e) => e.endpoint).sort()).toEqual(['/v1/chat/completions', '/v1/chat/completions', '/v1/embeddings']);
    expect(inv.entries.filter((e) => e.stream)).toHaveLength(1);
    expect(inv.entries.every((e) => e.answers === 1 && e.used_in_last_run === true)).toBe(true);
    expect(inv.entries.every((e) => typeof e.recorded_cost_usd === 'number' && e.recorded_cost_usd > 0)).toBe(true);

    const table = await runCli(['cassettes', 'list', cassette.dir], { home });
    expect(table.stdout).toMatch(/^FILE\s+ENDPOINT\s+MODEL\s+ANSWERS/);

    const chat = inv.entries.find((e) => e.endpoint === '/v1/chat/completions' && !e.stream)!;
    const show = await runCli(['cassettes', 'show', cassette.dir, chat.file.slice(0, -10)], { home });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('suite question');
    expect(show.stdout).toContain('Echo: suite question');

    // Nothing is unused after a full replay run; by age, everything is older than -1 days.
    const unused = await runCli(['cassettes', 'prune', cassette.dir, '--unused', '--json'], { home });
    expect((JSON.parse(unused.stdout) as { removed: unknown[] }).removed).toHaveLength(0);
    const dry = await runCli(['cassettes', 'prune', cassette.dir, '--older-than', '0', '--dry-run'], { home });
    expect(dry.stdout.trim().split('\n')).toHaveLength(3);
    expect(readdirSync(cassette.dir).filter((f) => f.endsWith('.json') && !f.startsWith('.'))).toHaveLength(3);
    const none = await runCli(['cassettes', 'prune', cassette.dir], { home });
    expect(none.code).toBe(2);
  });
});
