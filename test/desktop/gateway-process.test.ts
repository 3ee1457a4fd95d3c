/**
 * The tray finding, starting and stopping the gateway, with real `gateway start` processes on
 * throwaway data homes (port 0: the OS picks a free one, server.json tells the real URL):
 * - nothing running: it spawns one with the pinned Node, finds it through server.json and /healthz,
 *   stops it with SIGTERM (exit 0, audit flushed) and server.json is gone;
 * - one already running (started from a terminal): it attaches without spawning, and can stop it by pid;
 * - a stale server.json is no gateway; a start that fails says why in one line.
 * Electron is never launched.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeServerState } from '../../core/server-state.ts';
import { fetchSnapshot } from '../../desktop/src/admin-client.ts';
import { ensureGateway, findGateway, pinnedNode, startOptionsFromEnv, stopGateway } from '../../desktop/src/gateway-process.ts';
import type { GatewayConnection } from '../../desktop/src/gateway-process.ts';
import { CLI_TEST_TIMEOUT_MS, REPO_ROOT, startCli, tempHome } from '../support/cli.ts';
import type { RunningCli } from '../support/cli.ts';

const cleanups: Array<() => void | Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function home(): string {
  const h = tempHome('gw-tray-');
  cleanups.push(h.cleanup);
  return h.home;
}

/** A spawn that fails the test: attaching must not start anything. */
const noSpawn = (): never => {
  throw new Error('the tray spawned a gateway although one was running');
};

describe('gateway process', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('with none running: starts one, finds it via server.json, stops it, and server.json disappears', async () => {
    const h = home();
    const stateFile = path.join(h, 'server.json');
    expect(await findGateway(h)).toBeNull();

    const conn = await ensureGateway({ home: h, port: 0, demo: true, startTimeoutMs: 60_000 });
    cleanups.push(() => void conn.child?.kill('SIGKILL'));
    expect(conn.owned).toBe(true);
    expect(conn.child?.pid).toBe(conn.pid);
    expect(conn.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    expect(conn.baseUrl).toBe(`${conn.url}/v1`);
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toMatchObject({ url: conn.url, baseUrl: conn.baseUrl, pid: conn.pid });
    // The child's output went to the log in the data home, not to a pipe the tray must drain.
    expect(readFileSync(path.join(h, 'tray-gateway.log'), 'utf8')).toContain(conn.baseUrl);

    // Another tray (or this one after a restart) finds the same gateway through server.json.
    const found = await findGateway(h);
    expect(found).toMatchObject({ url: conn.url, pid: conn.pid, owned: false, adminToken: conn.adminToken });
    const again = await ensureGateway({ home: h, spawn: noSpawn });
    expect(again.pid).toBe(conn.pid);

    // It is a working gateway: the admin API answers with the token from the data home.
    const snap = await fetchSnapshot({ adminUrl: conn.url, adminToken: conn.adminToken });
    expect(snap.providers.map((p) => p.name)).toContain('demo');

    await stopGateway(conn);
    expect(conn.child?.exitCode).toBe(0); // SIGTERM is a graceful stop
    expect(existsSync(stateFile)).toBe(false);
    expect(await findGateway(h)).toBeNull();
  });

  it('with one already running from a terminal: attaches without spawning, and stops it by pid', async () => {
    const h = home();
    const cli: RunningCli = startCli(['start', '--no-tui', '--port', '0'], { home: h });
    cleanups.push(() => cli.stop('SIGKILL'));
    await cli.waitFor(/gateway listening on (http:\/\/\S+)/, 'stderr', 60_000);
    const stateFile = path.join(h, 'server.json');
    for (let i = 0; !existsSync(stateFile) && i < 200; i++) await new Promise((r) => setTimeout(r, 25));

    const conn: GatewayConnection = await ensureGateway({ home: h, spawn: noSpawn });
    expect(conn.owned).toBe(false);
    expect(conn.child).toBeNull();
    expect(conn.pid).toBe(cli.child.pid);
    expect(conn.adminToken).toBe(readFileSync(path.join(h, 'admin-token'), 'utf8').trim());
    expect((await fetchSnapshot({ adminUrl: conn.url, adminToken: conn.adminToken })).spend.today_usd).toBe(0);

    await stopGateway(conn);
    expect((await cli.exited).code).toBe(0);
    expect(existsSync(stateFile)).toBe(false);
  });

  it('a stale server.json (dead pid, or a live pid with nothing on /healthz) is not a gateway', async () => {
    const h = home();
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    writeFileSync(path.join(h, 'admin-token'), 'x'.repeat(40));

    writeServerState(h, { url: `http://127.0.0.1:${port}`, baseUrl: `http://127.0.0.1:${port}/v1`, pid: process.pid, startedAt: new Date().toISOString() });
    expect(await findGateway(h)).toBeNull();

    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => dead.once('exit', r));
    writeServerState(h, { url: `http://127.0.0.1:${port}`, baseUrl: `http://127.0.0.1:${port}/v1`, pid: dead.pid!, startedAt: new Date().toISOString() });
    expect(await findGateway(h)).toBeNull();
  });

  it('a start that fails (port in use) rejects with the gateway’s one-line reason', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => blocker.close(() => r())));
    const busy = (blocker.address() as { port: number }).port;
    await expect(ensureGateway({ home: home(), port: busy, startTimeoutMs: 60_000 })).rejects.toThrow(new RegExp(`did not start: Port ${busy} is already in use.*--port`));
  });

  it('reads its settings from the environment and runs the checkout’s pinned Node', () => {
    const opts = startOptionsFromEnv({ GATEWAY_HOME: '/tmp/gw-x', GATEWAY_TRAY_CHECKOUT: REPO_ROOT, GATEWAY_TRAY_PORT: '0', GATEWAY_TRAY_DEMO: '1' });
    expect(opts).toEqual({ home: '/tmp/gw-x', checkout: path.resolve(REPO_ROOT), port: 0, demo: true });
    expect(() => startOptionsFromEnv({ GATEWAY_TRAY_PORT: 'abc' })).toThrow(/GATEWAY_TRAY_PORT/);
    expect(pinnedNode(REPO_ROOT)).toBe(path.join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node'));
    expect(pinnedNode('/nonexistent')).toBe('node');
  });
});
