/**
 * The Ink dashboard: rendered by Ink into a fake terminal against a real gateway (demo provider), the
 * pure view at fixed sizes, failed fetches as a status line, and the promise that commands printing
 * data never load React (checked by recording every module a real `gateway` process resolves).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import React from 'react';
import { renderToString } from 'ink';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallJson } from '../../core/call-json.ts';
import { DashboardView, layout, mountDashboard } from '../../cli/tui/dashboard.ts';
import type { MountedDashboard } from '../../cli/tui/dashboard.ts';
import type { FeedState } from '../../cli/tui/feed.ts';
import { money } from '../../cli/tui/format.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { REPO_ROOT, runCli, tempHome } from '../support/cli.ts';

/** A terminal for Ink: records every write; in debug mode each write is one whole frame. */
class FakeTerminal extends Writable {
  readonly writes: string[] = [];
  columns: number;
  rows: number;
  constructor(columns = 120, rows = 40) {
    super();
    this.columns = columns;
    this.rows = rows;
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.writes.push(chunk.toString());
    cb();
  }
  lastFrame(): string {
    for (let i = this.writes.length - 1; i >= 0; i--) if (this.writes[i].trim() !== '') return stripVTControlCharacters(this.writes[i]);
    return '';
  }
  async waitForFrame(test: (frame: string) => boolean, what: string, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = this.lastFrame();
      if (test(f)) return f;
      if (Date.now() > deadline) throw new Error(`no frame with ${what} within ${timeoutMs} ms; last frame:\n${f}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** A keyboard: a TTY-looking stream whose raw mode is a no-op, so `useInput` is live and tests can type. */
function fakeKeyboard(): PassThrough & { isTTY: true; setRawMode(on: boolean): unknown } {
  return Object.assign(new PassThrough(), { isTTY: true as const, setRawMode() {} });
}

function mount(t: { baseUrl: string; url: string; adminToken: string }, extra: { onQuit?: () => void; term?: FakeTerminal } = {}) {
  const term = extra.term ?? new FakeTerminal();
  const keyboard = fakeKeyboard();
  const dash = mountDashboard({
    home: '/unused',
    baseUrl: t.baseUrl,
    adminUrl: t.url,
    adminToken: t.adminToken,
    quitStopsGateway: true,
    onQuit: extra.onQuit,
    refreshMs: 150,
    ink: { stdout: term, stdin: keyboard, debug: true, patchConsole: false, alternateScreen: false },
  });
  return { term, keyboard, dash };
}

describe('dashboard against a real gateway', () => {
  let t: TestGateway;
  const mounted: MountedDashboard[] = [];
  beforeAll(async () => {
    t = await startTestGateway({ demo: true });
  });
  afterAll(async () => {
    for (const d of mounted) d.stop();
    await t?.close();
  });

  it('shows the base URL, each call with its model and cost, spend, and provider health; q quits', async () => {
    let quit!: () => void;
    const quitted = new Promise<void>((r) => (quit = r));
    const { term, keyboard, dash } = mount({ baseUrl: t.baseUrl, url: t.gw.url, adminToken: t.gw.adminToken }, { onQuit: () => quit() });
    mounted.push(dash);

    let frame = await term.waitForFrame((f) => f.includes('● live') && /● demo\s+healthy/.test(f), 'the demo provider, healthy');
    expect(frame).toContain(t.baseUrl);
    expect(frame).toContain('no requests yet');
    expect(frame).toMatch(/Spend today \$0\.00\s+this month \$0\.00/);

    const { data, response } = await t.client().chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'hello tui' }] }).withResponse();
    const cost = Number(response.headers.get('x-gateway-cost-usd'));
    expect(cost).toBeGreaterThan(0);
    const id = response.headers.get('x-request-id');
    expect(id).toBeTruthy();

    // The call arrives over the event stream; the spend over the 2-s (here 150 ms) snapshot refresh.
    frame = await term.waitForFrame((f) => f.includes('demo-chat → demo/demo-chat') && f.includes(`Spend today ${money(cost)}`), 'the call and its spend');
    const row = frame.split('\n').find((l) => l.includes('demo-chat → demo/demo-chat'))!;
    expect(row).toMatch(/^[ ›]\d\d:\d\d:\d\d 200 test\s/);
    expect(row).toContain(money(cost));
    expect(row).toContain(`${data.usage!.prompt_tokens}→${data.usage!.completion_tokens}`);
    // The latency as the dashboard writes it: milliseconds, or seconds past one (a loaded machine).
    expect(row).toMatch(/(\d+ms|\d+\.\ds)\s+×1$/);
    expect(frame).toMatch(/test\s+no budget\s+\$[\d.]+ today/);

    // A failed call shows its status and why.
    await expect(t.client().chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow();
    frame = await term.waitForFrame((f) => /404 test\s+no-such-model ✗/.test(f), 'the 404');
    const rows = frame.split('\n');
    expect(rows.findIndex((l) => l.includes('no-such-model'))).toBeLessThan(rows.findIndex((l) => l.includes('demo-chat → demo/demo-chat'))); // newest on top

    // The breaker opens: health says so in plain words, with when it is tried again.
    for (let i = 0; i < 5; i++) t.gw.deps.breaker.onFailure('demo');
    frame = await term.waitForFrame((f) => /○ demo\s+failing, retry in \d+s/.test(f), 'the open breaker');
    expect(frame).not.toMatch(/\b(closed|half-open)\b/);
    t.gw.deps.breaker.onSuccess('demo');
    await term.waitForFrame((f) => /● demo\s+healthy/.test(f), 'the breaker closed again');

    expect(frame.split('\n').length).toBeLessThanOrEqual(term.rows);
    keyboard.write('q');
    await quitted;
    await dash.instance.waitUntilExit();
  });

  it('turns a failed fetch into a status line and keeps retrying', async () => {
    const { term, dash } = mount({ baseUrl: t.baseUrl, url: t.gw.url, adminToken: 'wrong-token' });
    mounted.push(dash);
    const frame = await term.waitForFrame((f) => f.includes('cannot reach the admin API: HTTP 401'), 'the 401 status line');
    expect(frame).toContain('admin token');
    expect(frame).toContain(t.baseUrl);
    dash.stop();

    // A port nothing listens on (not a fixed one such as 9: fetch refuses those "bad ports" outright).
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    const refused = mount({ baseUrl: `http://127.0.0.1:${closed}/v1`, url: `http://127.0.0.1:${closed}`, adminToken: 'x' });
    mounted.push(refused.dash);
    const f2 = await refused.term.waitForFrame((f) => f.includes('cannot reach the admin API') && f.includes('ECONNREFUSED'), 'the refused status line');
    expect(f2).toContain('○ connecting');
    // Retries do not pile up frames of errors or throw: still one screen, still mounted.
    await new Promise((r) => setTimeout(r, 400));
    expect(refused.term.lastFrame()).toContain('cannot reach the admin API');
    refused.dash.stop();
  });
});

describe('dashboard view', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  const call = (i: number, over: Partial<CallJson> = {}): CallJson => ({
    id: `req_${i}`,
    time: new Date(now - i * 1000).toISOString(),
    key: 'cursor',
    endpoint: '/v1/chat/completions',
    model_requested: `model-${i}`,
    model: 'gpt-4o-mini',
    provider: 'openai',
    status: 200,
    error_type: null,
    error_message: null,
    stream: false,
    input_tokens: 10,
    output_tokens: 5,
    cached_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: 0.0001,
    pricing: 'priced',
    price_version: 'v',
    latency_ms: 100,
    ttft_ms: null,
    attempts: 1,
    ...over,
  });
  const state = (calls: CallJson[]): FeedState => ({
    snapshot: {
      spend: { today_usd: 1.5, month_usd: 20 },
      keys: [
        { name: 'cursor', prefix: 'sk-gw-ab', state: 'active', budget_usd: 10, budget_period: 'monthly', spent_usd: 2.5, spent_period: 'monthly', remaining_usd: 7.5 },
        { name: 'gone', prefix: 'sk-gw-cd', state: 'deleted', budget_usd: null, budget_period: null, spent_usd: 0, spent_period: 'daily', remaining_usd: null },
      ],
      providers: [
        { name: 'openai', type: 'openai', preset: null, models: ['gpt-4o-mini'], spent_today_usd: 1.5, spent_month_usd: 20, health: 'closed', consecutive_failures: 0, next_probe_at: null },
        { name: 'groq', type: 'openai-compatible', preset: 'groq', models: [], spent_today_usd: 0, spent_month_usd: 0, health: 'open', consecutive_failures: 3, next_probe_at: now + 42_000 },
        { name: 'anthropic', type: 'anthropic', preset: null, models: [], spent_today_usd: 0, spent_month_usd: 0, health: 'half-open', consecutive_failures: 3, next_probe_at: now },
      ],
      recent: [],
      price_version: 'genai-prices@test',
    },
    calls,
    live: true,
    snapshotError: null,
    eventsError: null,
    updatedAt: now,
  });
  const view = (s: FeedState, columns: number, rows: number) =>
    renderToString(React.createElement(DashboardView, { state: s, baseUrl: 'http://127.0.0.1:4141/v1', columns, rows, now, quitStopsGateway: false }), { columns });

  it('bounds the request list to the terminal height, newest first', () => {
    const calls = Array.from({ length: 100 }, (_, i) => call(i));
    for (const [columns, rows] of [
      [130, 30],
      [90, 24],
      [80, 12],
      [200, 60],
    ]) {
      const out = view(state(calls), columns, rows);
      const lines = out.split('\n');
      expect(lines.length, `${columns}x${rows}`).toBeLessThanOrEqual(rows);
      const shown = lines.filter((l) => /model-\d+/.test(l)).map((l) => Number(/model-(\d+)/.exec(l)![1]));
      expect(shown.length, `${columns}x${rows}`).toBe(layout({ state: state(calls), columns, rows }).callRows);
      expect(shown).toEqual([...shown].sort((a, b) => a - b)); // newest (0 s ago) first
      expect(out).toContain('quit (the gateway keeps running)');
    }
  });

  it('shows budget bars and each provider\'s health in plain words', () => {
    const out = view(state([call(1, { status: 502, provider: null, error_message: 'openai: 503', cost_usd: null, input_tokens: 0, attempts: 2 })]), 130, 30);
    expect(out).toMatch(/cursor\s+█+░+ \$2\.50 \/ \$10\.00 monthly 25%/);
    expect(out).not.toContain('gone'); // deleted keys stay in the audit trail, not on the dashboard
    expect(out).toMatch(/● openai\s+healthy\s+\$1\.50 today/);
    expect(out).toMatch(/○ groq\s+failing, retry in 42s · 3 failures/);
    expect(out).toMatch(/◐ anthropic\s+trying again/);
    expect(out).not.toMatch(/\b(closed|half-open|open)\b/);
    expect(out).toMatch(/502 cursor\s+model-1 ✗ openai: 503/);
    expect(out).toMatch(/×2$/m);
    expect(out).toContain('Spend today $1.50   this month $20.00');
  });
});

describe('lazy loading', () => {
  // Records every module URL a process resolves, through Node's in-thread module hooks.
  let dir: string;
  let hook: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gw-lazy-'));
    hook = path.join(dir, 'record-modules.mjs');
    writeFileSync(
      hook,
      [
        "import { registerHooks } from 'node:module';",
        "import { writeFileSync } from 'node:fs';",
        'const seen = new Set();',
        'registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });',
        "process.on('exit', () => writeFileSync(process.env.GW_MODULE_LOG, [...seen].join('\\n')));",
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const loaded = (log: string): string[] => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const isUi = (url: string) => /\/node_modules\/(react|ink|react-reconciler|yoga-layout)\//.test(url) || url.includes('/cli/tui/dashboard.ts');

  it('the recorder sees React when the dashboard module is imported (control)', () => {
    const log = path.join(dir, 'control.log');
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, '--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'cli/tui/dashboard.ts')).href)})`], {
      cwd: REPO_ROOT,
      env: { ...process.env, NODE_OPTIONS: '', GW_MODULE_LOG: log },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const urls = loaded(log);
    expect(urls.some((u) => u.includes('/node_modules/react/'))).toBe(true);
    expect(urls.some((u) => u.includes('/node_modules/ink/'))).toBe(true);
  });

  for (const args of [
    ['usage', '--json'],
    ['keys', 'list', '--json'],
  ]) {
    it(`gateway ${args.join(' ')} never loads React or Ink`, async () => {
      const { home, cleanup } = tempHome();
      try {
        const log = path.join(dir, `${args.join('-')}.log`);
        const r = await runCli(args, { home, env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}`, GW_MODULE_LOG: log }, timeoutMs: 60_000 });
        expect(r.code, r.stderr).toBe(0);
        expect(() => JSON.parse(r.stdout)).not.toThrow();
        const urls = loaded(log);
        expect(urls.some((u) => u.includes('/node_modules/commander/'))).toBe(true); // the recorder did record the CLI
        expect(urls.filter(isUi)).toEqual([]);
      } finally {
        cleanup();
      }
    }, 90_000);
  }
});
