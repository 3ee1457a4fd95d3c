/**
 * The checkout's start bundle (bin/start-bundle.js, scripts/build-start-bundle.ts): used only when built from
 * the sources as they are, and a gateway started from it is the whole gateway (its worker threads, the UI's
 * files, the audit log), loading a few chunks instead of the TypeScript sources.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_DIR, CURRENT_FILE, fileStamp, freshStartBundle } from '../../bin/start-bundle.js';
import { buildStartBundle } from '../../scripts/build-start-bundle.ts';
import { CLI_TEST_TIMEOUT_MS, REPO_ROOT, runCli, startCli, tempHome } from '../support/cli.ts';
import type { RunningCli } from '../support/cli.ts';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A root with two inputs and a build whose manifest stamps them as they are now. */
function fakeCheckout(): { root: string; entry: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'gw-start-bundle-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(path.join(root, 'a.ts'), 'export const a = 1;\n');
  writeFileSync(path.join(root, 'b.ts'), 'export const b = 2;\n');
  const build = path.join(root, BUNDLE_DIR, 'b1');
  mkdirSync(build, { recursive: true });
  writeFileSync(path.join(build, 'manifest.json'), JSON.stringify({ entry: 'main.js', inputs: [fileStamp(root, 'a.ts'), fileStamp(root, 'b.ts')] }));
  writeFileSync(path.join(root, BUNDLE_DIR, CURRENT_FILE), JSON.stringify({ build: 'b1' }));
  return { root, entry: path.join(build, 'main.js') };
}

describe('which entry a start takes', () => {
  it('the bundle while every input is as it was built', () => {
    const { root, entry } = fakeCheckout();
    expect(freshStartBundle(root)).toBe(entry);
  });

  it('the sources once an input was edited, even to the same size', () => {
    const { root } = fakeCheckout();
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(root, 'b.ts'), later, later);
    expect(freshStartBundle(root)).toBeNull();
  });

  it('the sources when an input is gone, or there is no build to point at', () => {
    const a = fakeCheckout();
    rmSync(path.join(a.root, 'a.ts'));
    expect(freshStartBundle(a.root)).toBeNull();
    const b = fakeCheckout();
    rmSync(path.join(b.root, BUNDLE_DIR, CURRENT_FILE));
    expect(freshStartBundle(b.root)).toBeNull();
  });
});

function loadedModules(file: string): { main: string[]; worker: string[] } {
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const of = (who: string) => lines.filter((l) => l.startsWith(`${who} `)).map((l) => l.slice(who.length + 1));
  return { main: of('main'), worker: of('worker') };
}

describe('a gateway started from the bundle', { timeout: CLI_TEST_TIMEOUT_MS * 2 }, () => {
  it('serves calls, runs its three worker threads from the bundle and serves the UI, loading no TypeScript source', async () => {
    const dir = await buildStartBundle(REPO_ROOT);
    expect(freshStartBundle(REPO_ROOT)).toBe(path.join(dir, 'main.js'));

    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ port: 0 }));
    const modulesFile = path.join(home, 'modules.txt');
    const env = { NODE_OPTIONS: `--import=${path.join(REPO_ROOT, 'test/fixtures/loaded-modules.mjs')}`, LOADED_MODULES_FILE: modulesFile };
    const gw: RunningCli = startCli(['start', '--demo', '--no-tui'], { home, env });
    cleanups.push(() => gw.stop('SIGKILL'));
    const baseUrl = (await gw.waitFor(/gateway listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/, 'stderr'))[1];
    const key = (await gw.waitFor(/^(sk-gw-[A-Za-z0-9]{32,})$/m))[1];

    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-chat', max_tokens: 16, messages: [{ role: 'user', content: 'from the bundle' }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
    const origin = baseUrl.replace(/\/v1$/, '');
    const ui = await fetch(`${origin}/ui/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('<html');
    // The other two worker entries: a dashboard query runs on the read thread, and a prompt over 256 KB for a
    // key with a budget is counted on the tokenizer thread before the call is admitted.
    const adminToken = readFileSync(path.join(home, 'admin-token'), 'utf8').trim();
    const usage = await fetch(`${origin}/admin/usage?by=key`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(usage.status).toBe(200);
    const created = await runCli(['keys', 'create', '--name', 'budgeted', '--budget', '5'], { home });
    expect(created.code, created.stderr).toBe(0);
    const budgeted = /sk-gw-[A-Za-z0-9]{32,}/.exec(created.stdout)?.[0];
    const big = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${budgeted}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-chat', max_tokens: 16, messages: [{ role: 'user', content: 'word '.repeat(60_000) }] }),
    });
    expect(big.status).toBe(200);
    await gw.stop('SIGTERM');

    const logs = await runCli(['logs', '--json'], { home });
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('"model_requested":"demo-chat"');

    const loaded = loadedModules(modulesFile);
    const bundleUrl = `file://${dir}/`;
    expect(loaded.main).toContain(`${bundleUrl}main.js`);
    expect(loaded.main.some((u) => u.endsWith('/cli/main.ts') || /\/core\/.*\.ts$/.test(u))).toBe(false);
    expect(loaded.main.some((u) => u.includes('/node_modules/zod/'))).toBe(false);
    // The audit thread came from the bundle's own entry, beside the chunk that starts it.
    expect(loaded.worker).toContain(`${bundleUrl}audit-thread.js`);
    expect(loaded.worker).toContain(`${bundleUrl}read-thread.js`);
    expect(loaded.worker).toContain(`${bundleUrl}tokenizer-thread.js`);
    expect(loaded.main.filter((u) => u.startsWith(bundleUrl)).length).toBeLessThan(40);
  });

  it('GATEWAY_FROM_SOURCES=1 starts from the TypeScript sources', async () => {
    await buildStartBundle(REPO_ROOT);
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    const modulesFile = path.join(home, 'modules.txt');
    const env = { NODE_OPTIONS: `--import=${path.join(REPO_ROOT, 'test/fixtures/loaded-modules.mjs')}`, LOADED_MODULES_FILE: modulesFile, GATEWAY_FROM_SOURCES: '1' };
    const r = await runCli(['--version'], { home, env });
    expect(r.code, r.stderr).toBe(0);
    expect(loadedModules(modulesFile).main.some((u) => u.endsWith('/cli/main.ts'))).toBe(true);
  });
});
