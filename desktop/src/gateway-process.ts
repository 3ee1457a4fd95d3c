/**
 * Finding, starting and stopping the gateway the tray talks to. A running gateway announces itself in
 * `server.json` in its data home (url, baseUrl, pid); the tray trusts that file only when the pid is
 * alive and `GET /healthz` answers. Otherwise it starts one the way a user would,
 * `node bin/gateway.js start --no-tui` from the checkout, with the checkout's pinned Node: never with
 * Electron's own binary, whose native ABI cannot load the gateway's `better-sqlite3`.
 * Stopping sends SIGTERM, on which `gateway start` flushes the audit log and removes `server.json`.
 */
import { spawn as nodeSpawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clearServerState, ensureDataHome, processAlive, readServerState, resolveDataHome } from 'gateway-local';
import type { ServerState } from 'gateway-local';
import { readAdminToken } from './admin-client.ts';

export interface GatewayConnection {
  home: string;
  /** The gateway's origin, e.g. `http://127.0.0.1:4141` (admin API, `/ui`, `/healthz`). */
  url: string;
  /** What tools use as their OpenAI base URL: `<url>/v1`. */
  baseUrl: string;
  pid: number;
  adminToken: string;
  /** True when this tray started the process. */
  owned: boolean;
  /** The process, when owned. */
  child: ChildProcess | null;
  /** Resolves when an owned process exits (never for one the tray attached to). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** The data home (`GATEWAY_HOME` for the child). */
  home: string;
  /** The repository checkout holding `bin/gateway.js`. Default: the one this file lives in. */
  checkout?: string;
  /** The Node binary. Default: the checkout's pinned Node (`node_modules/node/bin/node`), else `node` on PATH. */
  node?: string;
  /** `--port`; 0 lets the OS choose. Default: the gateway's own (settings.json, else 4141). */
  port?: number;
  host?: string;
  demo?: boolean;
  /** The child's environment. Default: this process's, minus NODE_OPTIONS and Electron's own variables. */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for `server.json` and `/healthz`. Default 30 s (the gateway loads its TypeScript sources first). */
  startTimeoutMs?: number;
  /** Where the child's output goes (overwritten at each start). Default `<home>/tray-gateway.log`. */
  logFile?: string;
  /** For tests: the spawn function. */
  spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
}

/**
 * The tray's settings, from the environment: `GATEWAY_HOME` (the data home, as for the CLI),
 * `GATEWAY_TRAY_CHECKOUT` (where `bin/gateway.js` is), `GATEWAY_TRAY_NODE`, `GATEWAY_TRAY_PORT` and
 * `GATEWAY_TRAY_DEMO=1` (start with `--demo`). Used only when the tray has to start a gateway itself.
 */
export function startOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): StartOptions {
  const opts: StartOptions = { home: resolveDataHome(env) };
  if (env.GATEWAY_TRAY_CHECKOUT) opts.checkout = path.resolve(env.GATEWAY_TRAY_CHECKOUT);
  if (env.GATEWAY_TRAY_NODE) opts.node = env.GATEWAY_TRAY_NODE;
  if (env.GATEWAY_TRAY_PORT) {
    const port = Number(env.GATEWAY_TRAY_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`GATEWAY_TRAY_PORT must be a port number, not "${env.GATEWAY_TRAY_PORT}".`);
    opts.port = port;
  }
  if (env.GATEWAY_TRAY_DEMO === '1' || env.GATEWAY_TRAY_DEMO === 'true') opts.demo = true;
  return opts;
}

/** The checkout this file belongs to (`desktop/src/` → repo root). */
export function defaultCheckout(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}

/** The Node the repository pins (the registry's `node` package), or `node` from PATH when it is missing. */
export function pinnedNode(checkout: string, platform: NodeJS.Platform = process.platform): string {
  const bin = platform === 'win32' ? path.join(checkout, 'node_modules', 'node', 'bin', 'node.exe') : path.join(checkout, 'node_modules', 'node', 'bin', 'node');
  return existsSync(bin) ? bin : 'node';
}

/** Whether `GET <url>/healthz` answers 200 within `timeoutMs`. */
export async function isHealthy(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

const never = new Promise<never>(() => {});

function connection(home: string, s: ServerState, child: ChildProcess | null, exited?: GatewayConnection['exited']): GatewayConnection {
  return { home, url: s.url, baseUrl: s.baseUrl, pid: s.pid, adminToken: readAdminToken(home), owned: child !== null, child, exited: exited ?? never };
}

/** The gateway running on `home`, if `server.json` names a live process that answers `/healthz`. */
export async function findGateway(home: string, opts: { timeoutMs?: number } = {}): Promise<GatewayConnection | null> {
  const s = readServerState(home);
  if (!s || !(await isHealthy(s.url, opts.timeoutMs))) return null;
  try {
    return connection(home, s, null);
  } catch {
    return null; // no readable admin token: not a gateway the tray can talk to
  }
}

function childEnv(home: string, env: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...(env ?? process.env), GATEWAY_HOME: home, NO_COLOR: '1' };
  if (env === undefined) {
    // Electron's own switches and whatever loaders the tray runs under are not the gateway's.
    delete out.NODE_OPTIONS;
    for (const k of Object.keys(out)) if (k.startsWith('ELECTRON_')) delete out[k];
  }
  return out;
}

/** The last non-empty line of the child's log: `gateway start` reports a failure in one line. */
function lastLine(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
    return lines[lines.length - 1] ?? '';
  } catch {
    return '';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `gateway start --no-tui` for `home` and resolves once its `server.json` names the child and
 * `/healthz` answers. If the child exits first (port in use, a bad settings.json) the error carries
 * its last line; if another gateway for the same home won the race, that one is returned instead.
 */
export async function startGatewayProcess(opts: StartOptions): Promise<GatewayConnection> {
  const checkout = opts.checkout ?? defaultCheckout();
  const entry = path.join(checkout, 'bin', 'gateway.js');
  if (!existsSync(entry)) throw new Error(`No gateway checkout at ${checkout} (no bin/gateway.js); set GATEWAY_TRAY_CHECKOUT.`);
  const node = opts.node ?? pinnedNode(checkout);
  const args = [entry, 'start', '--no-tui'];
  if (opts.port !== undefined) args.push('--port', String(opts.port));
  if (opts.host !== undefined) args.push('--host', opts.host);
  if (opts.demo) args.push('--demo');

  ensureDataHome(opts.home); // a first run: the log below goes there before the gateway creates it
  const logFile = opts.logFile ?? path.join(opts.home, 'tray-gateway.log');
  // A file rather than a pipe: the gateway must not die of EPIPE if the tray goes away first.
  const log = openSync(logFile, 'w', 0o600);
  let child: ChildProcess;
  try {
    child = (opts.spawn ?? nodeSpawn)(node, args, { cwd: checkout, env: childEnv(opts.home, opts.env), stdio: ['ignore', log, log], windowsHide: true });
  } finally {
    closeSync(log);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const seen: { exit: { code: number | null } | null; error: Error | null } = { exit: null, error: null };
  child.once('error', (err) => (seen.error = err));
  void exited.then((e) => (seen.exit = e));

  const timeoutMs = opts.startTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = readServerState(opts.home);
    if (s && s.pid === child.pid && (await isHealthy(s.url))) return connection(opts.home, s, child, exited);
    if (seen.exit !== null) {
      // Two trays (or a `gateway start` in a terminal) may have raced us to the same home.
      const other = await findGateway(opts.home);
      if (other) return other;
      const why = seen.error ? `could not run ${node}: ${seen.error.message}` : lastLine(logFile).replace(/^gateway: /, '') || `exit code ${String(seen.exit.code)}`;
      throw new Error(`The gateway did not start: ${why}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The gateway did not announce itself in ${path.join(opts.home, 'server.json')} within ${Math.round(timeoutMs / 1000)} s (log: ${logFile}).`);
    }
    await sleep(100);
  }
}

/** The running gateway for `opts.home`, or a newly started one. */
export async function ensureGateway(opts: StartOptions): Promise<GatewayConnection> {
  return (await findGateway(opts.home)) ?? startGatewayProcess(opts);
}

/**
 * Stops the gateway with SIGTERM (it flushes the audit log and removes `server.json`), and SIGKILL
 * after `timeoutMs` (then the tray removes the stale `server.json` itself). Works for a gateway the
 * tray attached to as well: it is the user's own process. (On Windows a signal ends a process
 * at once, without the flush.)
 */
export async function stopGateway(conn: GatewayConnection, opts: { timeoutMs?: number } = {}): Promise<void> {
  const running = () => (conn.child ? conn.child.exitCode === null && conn.child.signalCode === null : processAlive(conn.pid));
  /** Whether the process ended within `ms`. */
  const ended = async (ms: number): Promise<boolean> => {
    const until = Date.now() + ms;
    while (running()) {
      if (Date.now() > until) return false;
      await sleep(50);
    }
    return true;
  };
  const send = (signal: NodeJS.Signals) => {
    try {
      if (conn.child) conn.child.kill(signal);
      else process.kill(conn.pid, signal);
    } catch {
      /* already gone */
    }
  };
  if (running()) {
    send('SIGTERM');
    if (!(await ended(opts.timeoutMs ?? 15_000))) {
      send('SIGKILL');
      await ended(5_000);
    }
  }
  // After SIGTERM the gateway removed it; after SIGKILL it is stale and ours to remove.
  clearServerState(conn.home, conn.pid);
}
