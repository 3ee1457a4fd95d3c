/**
 * `gateway start`: on a fresh home `--demo` prints a key and serves `demo-chat` to a plain fetch, and
 * a graceful stop flushes the audit log and removes server.json; on a port already in use it prints a
 * one-line error naming the port and `--port`, and exits 1.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import { Store } from '../../core/storage/index.ts';
import { runCli, startCli, tempHome, waitForBaseUrl, CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';
import type { RunningCli } from '../support/cli.ts';

const homes: Array<() => void> = [];
const running: RunningCli[] = [];
let blocker: Server;
let busyPort: number;

beforeAll(async () => {
  blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  busyPort = (blocker.address() as { port: number }).port;
});
afterAll(async () => {
  for (const r of running) await r.stop('SIGKILL');
  await new Promise<void>((resolve) => blocker.close(() => resolve()));
  for (const c of homes) c();
});

function home(): string {
  const h = tempHome();
  homes.push(h.cleanup);
  return h.home;
}

describe('gateway start', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('--demo on a fresh home prints a key and serves demo-chat to a plain fetch', async () => {
    const h = home();
    const gw = startCli(['start', '--demo', '--no-tui', '--port', '0'], { home: h });
    running.push(gw);
    const key = (await gw.waitFor(/^(sk-gw-[A-Za-z0-9]{32,})$/m))[1];
    const stateFile = path.join(h, 'server.json');
    const baseUrl = await waitForBaseUrl(h);
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/v1$/);
    expect(gw.stderr).toContain(baseUrl);

    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'hello demo' }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }>; usage: { cost: number } };
    expect(body.choices[0].message.content).toBe('Demo reply to: hello demo');
    expect(body.usage.cost).toBeGreaterThan(0);
    expect(res.headers.get('x-gateway-provider')).toMatch(/^demo/);
    const id = res.headers.get('x-request-id')!;
    // Without a TTY each call is printed as a plain log line.
    await gw.waitFor(new RegExp(id));

    const models = await fetch(`${baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await models.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toContain('demo-chat');

    // A graceful stop flushes the audit log and clears server.json.
    const exit = await gw.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(existsSync(stateFile)).toBe(false);
    const store = Store.open(h);
    try {
      expect(getCall(store.db, id)).toMatchObject({ status: 200, model: 'demo-chat', pricing: 'priced' });
    } finally {
      store.close();
    }
  });

  it('on a port already in use: a one-line error naming the port and --port, exit 1', async () => {
    const r = await runCli(['start', '--no-tui', '--port', String(busyPort)], { home: home() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(String(busyPort));
    expect(lines[0]).toContain('--port');
  });

  it('on a port already in use with --demo: the same, and the process does not hang', async () => {
    const r = await runCli(['start', '--demo', '--no-tui', '--port', String(busyPort)], { home: home(), timeoutMs: 40_000 });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(String(busyPort));
    expect(lines[0]).toContain('--port');
  });

  it('names the port it tried when that port came from settings.json', async () => {
    const h = home();
    writeFileSync(path.join(h, 'settings.json'), JSON.stringify({ port: busyPort }));
    const r = await runCli(['start', '--no-tui'], { home: h });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(String(busyPort));
    // Not the default port (as a whole number: a busy port such as 41411 contains its digits).
    expect(lines[0]).not.toMatch(/(?<!\d)4141(?!\d)/);
    expect(lines[0]).toContain('--port');
  });
});
