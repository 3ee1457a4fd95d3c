/**
 * The CLI's side of the dashboards, against a real gateway and the real `gateway` binary: `keys list`
 * shows spend against budget (text and `--json`); `logs` filters by key, model, status and time, prints
 * local time and marks streams, and `logs --json` keeps exactly the documented fields; `gateway ui`
 * gives a one-time sign-in link (printed when no browser can be opened) that works once; `gateway
 * start` prints such a link instead of the token file's path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeServerState } from '../../core/server-state.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { CLI_TEST_TIMEOUT_MS, runCli, startCli, tempHome } from '../support/cli.ts';

/** The `logs --json` fields DESIGN.md lists (more may be added, none renamed). */
const DOCUMENTED = ['id', 'time', 'key', 'model_requested', 'model', 'provider', 'status', 'error_type', 'input_tokens', 'output_tokens', 'cost_usd', 'pricing', 'latency_ms', 'ttft_ms', 'attempts'];

describe('dashboards from the CLI', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let t: TestGateway;
  const cli = (...args: string[]) => runCli(args, { home: t.home, env: { DISPLAY: undefined, WAYLAND_DISPLAY: undefined } });

  beforeAll(async () => {
    t = await startTestGateway({
      demo: true,
      keys: [
        { name: 'budgeted', budgetUsd: 0.0002, budgetPeriod: 'daily' },
        { name: 'free' },
      ],
    });
    const b = t.client({ apiKey: t.keys.budgeted });
    await b.chat.completions.create({ model: 'demo-chat', max_tokens: 20, messages: [{ role: 'user', content: 'one' }] });
    const stream = await b.chat.completions.create({ model: 'demo-chat', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'two, streamed' }] });
    for await (const _ of stream) {
      /* drain */
    }
    await t.client({ apiKey: t.keys.free }).chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    await t.client({ apiKey: t.keys.free }).embeddings.create({ model: 'demo-embedding', input: 'x' });
    t.flush();
    writeServerState(t.home, { url: t.gw.url, baseUrl: t.baseUrl, pid: process.pid, startedAt: new Date().toISOString() });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('keys list shows spend against budget, in text and JSON', async () => {
    const json = await cli('keys', 'list', '--json');
    expect(json.code, json.stderr).toBe(0);
    const keys = JSON.parse(json.stdout) as Array<{ name: string; budget_usd: number | null; spent_usd: number; spent_period: string; remaining_usd: number | null }>;
    const budgeted = keys.find((k) => k.name === 'budgeted')!;
    const snapshot = (await (await fetch(`${t.gw.url}/admin/keys`, { headers: { authorization: `Bearer ${t.gw.adminToken}` } })).json()) as { keys: Array<{ name: string; spent_usd: number }> };
    expect(budgeted.spent_usd).toBeGreaterThan(0);
    expect(budgeted.spent_usd).toBeCloseTo(snapshot.keys.find((k) => k.name === 'budgeted')!.spent_usd, 12);
    expect(budgeted).toMatchObject({ budget_usd: 0.0002, spent_period: 'daily' });
    expect(budgeted.remaining_usd).toBeCloseTo(0.0002 - budgeted.spent_usd, 12);
    expect(keys.find((k) => k.name === 'free')).toMatchObject({ budget_usd: null, remaining_usd: null, spent_period: 'daily' });

    const text = await cli('keys', 'list');
    expect(text.stdout).toContain('SPENT / BUDGET');
    const pct = Math.round((budgeted.spent_usd / 0.0002) * 100);
    expect(text.stdout).toMatch(new RegExp(`budgeted\\s.*\\$[\\d.]+ / \\$0\\.0002 daily\\s+${pct}%`));
    expect(text.stdout).toMatch(/free\s.*\$[\d.]+ today \(no budget\)/);
  });

  it('logs filter by key, model, status and time; --json keeps the documented fields', async () => {
    const all = (await cli('logs', '--json')).stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(all).toHaveLength(4);
    for (const row of all) expect(Object.keys(row)).toEqual(expect.arrayContaining(DOCUMENTED));

    const byKey = (await cli('logs', '--json', '--key', 'budgeted')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { key: string });
    expect(byKey).toHaveLength(2);
    expect(byKey.every((r) => r.key === 'budgeted')).toBe(true);

    const byModel = (await cli('logs', '--json', '--model', 'demo-embedding')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { model: string });
    expect(byModel.map((r) => r.model)).toEqual(['demo-embedding']);

    const errors = (await cli('logs', '--json', '--status', '4xx')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { status: number });
    expect(errors.map((r) => r.status)).toEqual([404]);
    const ok = (await cli('logs', '--json', '--status', 'ok')).stdout.trim().split('\n');
    expect(ok).toHaveLength(3);

    expect((await cli('logs', '--json', '--since', '1h')).stdout.trim().split('\n')).toHaveLength(4);
    const tomorrow = new Date(Date.now() + 86_400_000);
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}`;
    const none = await cli('logs', '--json', '--since', day);
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe('');

    const bad = await cli('logs', '--status', 'teapot');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--status');
  });

  it('logs print local time and mark streamed calls', async () => {
    const json = (await cli('logs', '--json', '--key', 'budgeted')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; time: string; stream: boolean });
    const text = (await cli('logs', '--key', 'budgeted')).stdout.trim().split('\n');
    expect(text).toHaveLength(2);
    for (const [i, row] of json.entries()) {
      const d = new Date(row.time);
      const p = (n: number) => String(n).padStart(2, '0');
      expect(text[i]?.startsWith(`${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} 200 budgeted`)).toBe(true);
      expect(text[i]?.includes('[stream]')).toBe(row.stream);
      expect(text[i]).toContain(row.id);
    }
    expect(json.some((r) => r.stream)).toBe(true);
    // A refused call cost nothing: a dash, not "unpriced".
    const refused = (await cli('logs', '--status', '404')).stdout.trim();
    expect(refused).toMatch(/ - \d+ms x0 /);
    expect(refused).not.toContain('unpriced');
  });

  it('gateway ui prints a one-time sign-in link when no browser can be opened', async () => {
    const r = await cli('ui');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Could not open a browser');
    const url = r.stdout.trim();
    expect(url).toMatch(new RegExp(`^${t.gw.url.replace(/[.]/g, '\\.')}/ui/#login=gwcode-[A-Za-z0-9_-]+$`));
    expect(url).not.toContain(t.gw.adminToken);
    const code = decodeURIComponent(url.split('#login=')[1] ?? '');
    const exchange = () => fetch(`${t.gw.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    const first = await exchange();
    expect(first.status).toBe(200);
    const { token } = (await first.json()) as { token: string };
    expect((await fetch(`${t.gw.url}/admin/keys`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const again = await exchange();
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('invalid_login_code');
  });

  it('gateway ui without a running gateway says how to start one', async () => {
    const { home, cleanup } = tempHome();
    try {
      const r = await runCli(['ui'], { home });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('gateway start');
    } finally {
      cleanup();
    }
  });

  it('gateway start prints a sign-in link to the dashboard, not the token file', async () => {
    const { home, cleanup } = tempHome();
    const gw = startCli(['start', '--demo', '--no-tui', '--port', '0'], { home });
    try {
      const [, url] = await gw.waitFor(/Dashboard \(signed in[^)]*\): (\S+)/, 'stderr');
      expect(gw.stderr).not.toContain('admin-token');
      const code = decodeURIComponent(url?.split('#login=')[1] ?? '');
      const origin = url?.split('/ui/')[0];
      const r = await fetch(`${origin}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
      expect(r.status).toBe(200);
    } finally {
      await gw.stop();
      cleanup();
    }
  });
});
