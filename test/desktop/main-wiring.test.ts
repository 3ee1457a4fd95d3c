/**
 * desktop/src/main.ts end to end, with a fake `electron` module (test/desktop/fake-electron) under
 * plain Node: on a fresh data home it starts a gateway, shows today's spend, creates and copies a key,
 * copies the base URL, notifies at a budget threshold, opens the dashboard in its own session whose
 * header hook lets the page reach the admin API, and on Quit stops the gateway it started.
 * Electron itself is never launched.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { money } from '../../cli/tui/format.ts';
import { Store } from '../../core/storage/index.ts';
import { CLI_TEST_TIMEOUT_MS, REPO_ROOT, tempHome } from '../support/cli.ts';
import { percentUsed } from '../../desktop/src/tray-model.ts';

type TrayEvent = { type: string; [k: string]: unknown };

const h = tempHome('gw-tray-main-');
let child: ChildProcessWithoutNullStreams | null = null;
afterAll(() => {
  child?.kill('SIGKILL');
  // A gateway left behind by a failed run: its pid is in server.json.
  try {
    const pid = (JSON.parse(readFileSync(path.join(h.home, 'server.json'), 'utf8')) as { pid: number }).pid;
    process.kill(pid, 'SIGKILL');
  } catch {
    /* none */
  }
  h.cleanup();
});

describe('tray main process (fake electron)', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('starts a gateway, shows spend, copies URL and key, notifies, opens the dashboard, and stops on quit', async () => {
    // A key with a small daily budget: one demo call (~$0.00002) is past 50 %.
    const store = Store.open(h.home);
    const ci = store.keys.create({ name: 'ci', budgetUsd: 0.00003, budgetPeriod: 'daily' }).secret;
    store.close();

    const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_HOME: h.home, GATEWAY_TRAY_PORT: '0', GATEWAY_TRAY_DEMO: '1', GATEWAY_TRAY_POLL_MS: '200' };
    delete env.NODE_OPTIONS;
    const register = path.join(REPO_ROOT, 'test', 'desktop', 'fake-electron', 'register.ts');
    const c = spawn(process.execPath, ['--import', register, path.join(REPO_ROOT, 'desktop', 'src', 'main.ts')], { cwd: REPO_ROOT, env });
    child = c;
    const events: TrayEvent[] = [];
    let stderr = '';
    let buf = '';
    const waiters = new Set<() => void>();
    c.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) events.push(JSON.parse(line) as TrayEvent);
      }
      for (const w of [...waiters]) w();
    });
    c.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let gone = false;
    const exited = new Promise<number | null>((resolve) =>
      c.once('exit', (code) => {
        gone = true;
        resolve(code);
        for (const w of [...waiters]) w();
      }),
    );

    let from = 0;
    /** The next event (after the last one waited for) that matches. */
    const next = (what: string, pred: (e: TrayEvent) => boolean, ms = 60_000): Promise<TrayEvent> =>
      new Promise((resolve, reject) => {
        const check = () => {
          const i = events.findIndex((e, n) => n >= from && pred(e));
          if (i === -1) {
            if (gone) {
              cleanup();
              reject(new Error(`the tray exited before ${what}; stderr: ${stderr}; last events: ${JSON.stringify(events.slice(-5))}`));
            }
            return;
          }
          from = i + 1;
          cleanup();
          resolve(events[i]);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${what}; stderr: ${stderr}; last events: ${JSON.stringify(events.slice(-5))}`));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    type Render = { title: string; tooltip: string; items: string[] };
    const render = async (what: string, pred: (e: Render) => boolean): Promise<Render> =>
      (await next(what, (e) => e.type === 'render' && pred(e as unknown as Render))) as unknown as Render;
    const click = (label: string) => c.stdin.write(`click ${label}\n`);

    // Starts a gateway itself (none runs on this home), then shows today's spend: nothing yet.
    await render('"starting"', (r) => r.tooltip === 'Gateway: starting');
    // (The title is set on macOS only; the tooltip carries the spend everywhere.)
    const first = await render('the first snapshot', (r) => r.tooltip.startsWith('Gateway: $0.00 today'));
    expect(first.items).toContain('[x] Stop gateway');
    expect(first.items).toContain('[x] Quit (stops the gateway it started)');
    expect(first.items).toContain('  demo: healthy');
    const state = JSON.parse(readFileSync(path.join(h.home, 'server.json'), 'utf8')) as { url: string; baseUrl: string; pid: number };

    click('Copy base URL');
    expect((await next('the base URL on the clipboard', (e) => e.type === 'clipboard')).text).toBe(state.baseUrl);

    click('Create a new key');
    const key = String((await next('a key on the clipboard', (e) => e.type === 'clipboard')).text);
    expect(key).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
    expect((await next('the key notification', (e) => e.type === 'notification')).title).toMatch(/^New key "tray-\d{8}-\d{6}" copied$/);

    // A call on the budgeted key: the title follows the spend and a 50 % notification appears, once.
    const res = await fetch(`${state.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ci}`, 'content-type': 'application/json' },
      // max_tokens: admission reserves the worst case against this tiny budget.
      body: JSON.stringify({ model: 'demo-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(res.status).toBe(200);
    const cost = ((await res.json()) as { usage: { cost: number } }).usage.cost;
    const alert = await next('the budget notification', (e) => e.type === 'notification');
    expect(alert.title).toBe('Budget 50% used: ci');
    const after = await render('the new spend', (r) => r.tooltip.startsWith(`Gateway: ${money(cost)} today`));
    expect(after.items).toContain(`  ci: ${money(cost)} of ${money(0.00003)} daily (${percentUsed(cost, 0.00003)}%)`);
    expect(after.items.some((l) => /^ {2}tray-\d{8}-\d{6}: \$0\.00 today, no budget$/.test(l))).toBe(true);

    // The dashboard: its own session, no Node in the page, and the admin API answers through the header hook.
    click('Open dashboard');
    expect(await next('the dashboard window', (e) => e.type === 'window')).toMatchObject({ partition: 'gateway-dashboard', nodeIntegration: false, contextIsolation: true });
    expect(await next('the dashboard load', (e) => e.type === 'load')).toMatchObject({ url: `${state.url}/ui`, adminStatus: 200, injected: true });

    // Quit stops the gateway this tray started: a graceful stop, server.json removed.
    c.stdin.write('quit\n');
    await next('exit', (e) => e.type === 'exit');
    expect(await exited).toBe(0);
    expect(existsSync(path.join(h.home, 'server.json'))).toBe(false);
    expect(() => process.kill(state.pid, 0)).toThrow();
    expect(events.filter((e) => e.type === 'notification' && String(e.title).startsWith('Budget'))).toHaveLength(1);
    expect(events.some((e) => e.type === 'error')).toBe(false);
  });
});
