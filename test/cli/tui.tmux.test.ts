/**
 * `gateway top` in a real terminal (tmux), attached to a real gateway: each view by keyboard (calls with
 * the detail pane, keys, providers, usage), `/` to filter, `p` to pause, arrows and Enter; at 80x24 the
 * key closest to its budget is the one shown; a resize redraws at the new size; health in plain words;
 * and with NO_COLOR=1 the terminal receives no colour or style escape code at all (a control run
 * without it shows they would be seen).
 *
 * Needs tmux (scripts/ci-apt-packages.txt); skipped without it unless CI or GATEWAY_REQUIRE_TMUX=1.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeServerState } from '../../core/server-state.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const required = Boolean(process.env.CI) || process.env.GATEWAY_REQUIRE_TMUX === '1';
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/gateway.js');
const SOCKET = `gw-tui-test-${process.pid}`;

const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });

/** The screen as text (`escapes`: with the SGR codes tmux would send for colours and styles). */
const screen = (session: string, escapes = false): string => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', session).replace(/\n$/, '');

async function waitForScreen(session: string, test: (s: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    last = screen(session);
    if (test(last)) return last;
    if (Date.now() > deadline) throw new Error(`no screen with ${what} within ${timeoutMs} ms; last screen:\n${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const SGR = /\x1b\[[0-9;:]*m/;

describe.skipIf(!hasTmux && !required)('gateway top in tmux', { timeout: 120_000 }, () => {
  let t: TestGateway;
  let n = 0;
  const sessions: string[] = [];

  /** Starts `gateway top` in a new tmux session of the given size; returns the session's name. */
  const top = (cols: number, rows: number, env: Record<string, string> = {}): string => {
    const name = `top${++n}`;
    const vars = Object.entries({ GATEWAY_HOME: t.home, TERM: 'xterm-256color', ...env }).map(([k, v]) => `${k}=${v}`);
    tmux('new-session', '-d', '-s', name, '-x', String(cols), '-y', String(rows), 'env', '-u', 'NO_COLOR', '-u', 'FORCE_COLOR', '-u', 'CI', ...vars, process.execPath, BIN, 'top');
    sessions.push(name);
    return name;
  };
  const keys = (session: string, ...k: string[]) => tmux('send-keys', '-t', session, ...k);

  beforeAll(async () => {
    if (!hasTmux) throw new Error('tmux is not installed: apt-get install -y tmux');
    t = await startTestGateway({
      demo: true,
      keys: [
        { name: 'alpha-nobudget' },
        { name: 'beta-far', budgetUsd: 100, budgetPeriod: 'monthly' },
        { name: 'gamma-near', budgetUsd: 0.00005, budgetPeriod: 'daily' },
        { name: 'delta-half', budgetUsd: 0.001, budgetPeriod: 'daily' },
      ],
    });
    for (const k of ['gamma-near', 'delta-half', 'beta-far', 'alpha-nobudget']) {
      // max_tokens: admission reserves the worst case, and gamma-near's budget is tiny.
      await t.client({ apiKey: t.keys[k] }).chat.completions.create({ model: 'demo-chat', max_tokens: 8, messages: [{ role: 'user', content: `hello from ${k}` }] });
    }
    await t.client({ apiKey: t.keys['alpha-nobudget'] }).chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    writeServerState(t.home, { url: t.gw.url, baseUrl: t.baseUrl, pid: process.pid, startedAt: new Date().toISOString() });
  });

  afterAll(async () => {
    for (const s of sessions) spawnSync('tmux', ['-L', SOCKET, 'kill-session', '-t', s]);
    spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    await t?.close();
  });

  it('at 80x24 shows the key closest to its budget, the calls, plain health, and fits the screen', async () => {
    const s = top(80, 24);
    const frame = await waitForScreen(s, (f) => f.includes('● live') && f.includes('gamma-near') && f.includes('demo-chat'), 'the dashboard');
    const lines = frame.split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    // Only room for one key: it is the one nearest its budget, the others are counted.
    expect(frame).toMatch(/gamma-near\s+█/);
    expect(frame).not.toContain('alpha-nobudget  ');
    expect(frame).toMatch(/\+3 more/);
    expect(frame).toMatch(/demo\s+healthy/);
    expect(frame).not.toMatch(/\bclosed\b/);
    expect(frame).toContain('[1 Calls]');
  });

  it('switches views by keyboard: keys, providers, usage, calls', async () => {
    const s = top(100, 30);
    await waitForScreen(s, (f) => f.includes('● live') && f.includes('[1 Calls]'), 'the calls view');

    keys(s, '2');
    const k = await waitForScreen(s, (f) => f.includes('[2 Keys]') && f.includes('closest to budget first'), 'the keys view');
    const order = ['gamma-near', 'delta-half', 'beta-far', 'alpha-nobudget'].map((name) => k.indexOf(name));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));

    keys(s, '3');
    const p = await waitForScreen(s, (f) => f.includes('[3 Providers]') && /demo\s+healthy/.test(f), 'the providers view');
    expect(p).toContain('models: demo-chat, demo-embedding');

    keys(s, '4');
    const u = await waitForScreen(s, (f) => f.includes('[4 Usage]') && f.includes('MODEL') && /demo-chat\s+\$/.test(f), 'the usage view');
    const d = new Date();
    const today = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    expect(u).toMatch(new RegExp(`${today}\\s+█`));

    keys(s, 'Tab'); // wraps around to calls
    await waitForScreen(s, (f) => f.includes('[1 Calls]') && f.includes('Requests'), 'back on the calls view');
  });

  it('filters with /, pauses with p, and opens a call\'s detail with arrows and Enter', async () => {
    const s = top(110, 36);
    await waitForScreen(s, (f) => f.includes('● live') && f.includes('no-such-model'), 'the calls');

    keys(s, '/');
    await waitForScreen(s, (f) => f.includes('filter:'), 'the filter prompt opened');
    keys(s, '-l', 'gamma');
    await waitForScreen(s, (f) => f.includes('filter: gamma'), 'the filter prompt');
    keys(s, 'Enter');
    const filtered = await waitForScreen(s, (f) => f.includes('filter "gamma"') && !f.includes('no-such-model'), 'the filtered list');
    expect(filtered.split('\n').filter((l) => /^[ ›]\d\d:\d\d:\d\d /.test(l))).toHaveLength(1);
    keys(s, 'Escape');
    await waitForScreen(s, (f) => f.includes('no-such-model') && !f.includes('filter "gamma"'), 'the filter cleared');

    keys(s, 'p');
    await waitForScreen(s, (f) => f.includes('PAUSED'), 'the pause mark');
    await t.client({ apiKey: t.keys['beta-far'] }).chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'made while paused' }] });
    await new Promise((r) => setTimeout(r, 800));
    const paused = screen(s);
    const rowsWhilePaused = paused.split('\n').filter((l) => /^[ ›]\d\d:\d\d:\d\d /.test(l)).length;
    keys(s, 'p');
    await waitForScreen(s, (f) => !f.includes('PAUSED') && f.split('\n').filter((l) => /^[ ›]\d\d:\d\d:\d\d /.test(l)).length === rowsWhilePaused + 1, 'the call made while paused');

    // The newest call is selected; Down selects the next (the refused 404); Enter opens its detail.
    keys(s, 'Down');
    await waitForScreen(s, (f) => f.split('\n').find((l) => l.startsWith('›'))?.includes('no-such-model') === true, 'the refused call selected');
    keys(s, 'Enter');
    const refused = await waitForScreen(s, (f) => f.includes('Esc closes') && f.includes('none: the call reached no provider'), 'the refused call\'s detail');
    expect(refused.split('\n').find((l) => l.startsWith('›'))).toContain('no-such-model');
    expect(refused).toContain('not billed');
    const id = /Call (\S+)/.exec(refused)?.[1] ?? '';
    const row = (await (await fetch(`${t.gw.url}/admin/logs/${id}`, { headers: { authorization: `Bearer ${t.gw.adminToken}` } })).json()) as { status: number; time: string };
    expect(row.status).toBe(404);
    expect(refused).toContain(new Date(row.time).toLocaleString());
    // Up: the newest call again, its detail follows the selection, with its attempt.
    keys(s, 'Up');
    const ok = await waitForScreen(s, (f) => f.includes('Esc closes') && /attempts\s+1\. demo\/demo-chat 200/.test(f), 'the newest call\'s detail');
    expect(ok.split('\n').find((l) => l.startsWith('›'))).toContain('beta-far');
    keys(s, 'Escape');
    await waitForScreen(s, (f) => !f.includes('Esc closes'), 'the detail closed');
  });

  it('redraws at the new size when the terminal is resized', async () => {
    const s = top(80, 24);
    await waitForScreen(s, (f) => f.includes('● live') && f.includes('gamma-near'), 'the dashboard');
    tmux('resize-window', '-t', s, '-x', '140', '-y', '45');
    // Wide enough for keys beside providers, and tall enough for every key.
    const wide = await waitForScreen(s, (f) => f.includes('alpha-nobudget') && f.includes('beta-far') && /Keys .*Providers/.test(f), 'the wide layout');
    expect(wide.split('\n').some((l) => l.length > 100)).toBe(true);
    tmux('resize-window', '-t', s, '-x', '60', '-y', '16');
    const small = await waitForScreen(s, (f) => !f.includes('alpha-nobudget') && f.includes('Requests'), 'the small layout');
    expect(small.split('\n').every((l) => l.length <= 60)).toBe(true);
  });

  it('with NO_COLOR=1 sends no colour or style codes (and without it, it does)', async () => {
    const control = top(100, 30);
    await waitForScreen(control, (f) => f.includes('● live') && f.includes('demo-chat'), 'the control dashboard');
    expect(screen(control, true)).toMatch(SGR);

    const plain = top(100, 30, { NO_COLOR: '1' });
    await waitForScreen(plain, (f) => f.includes('● live') && f.includes('demo-chat'), 'the NO_COLOR dashboard');
    keys(plain, '2');
    await waitForScreen(plain, (f) => f.includes('closest to budget first'), 'the keys view');
    expect(screen(plain, true)).not.toMatch(SGR);
    // One key at a time: sent together, '1' and Enter can reach the UI as one chunk that is neither.
    keys(plain, '1');
    await waitForScreen(plain, (f) => !f.includes('closest to budget first') && f.includes('demo-chat'), 'the calls view');
    keys(plain, 'Enter');
    await waitForScreen(plain, (f) => f.includes('Esc closes'), 'the detail pane');
    const withEscapes = screen(plain, true);
    expect(withEscapes).not.toMatch(SGR);
    // The selection stays visible without colours.
    expect(withEscapes.split('\n').some((l) => l.startsWith('›'))).toBe(true);
  });
});
