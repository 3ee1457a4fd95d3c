/**
 * Real PostgreSQL and Redis servers for team-mode tests, from the distribution's packages
 * (`apt-get install postgresql redis-server`), each in a throwaway folder on a free loopback port.
 * As root, PostgreSQL runs as the `postgres` user (it refuses root). Nothing is left behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';

export function pgBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0], 'bin') : null;
}

export const redisServerBin = (): string | null => ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p)) ?? null;

export const teamServersInstalled = (): boolean => pgBinDir() !== null && redisServerBin() !== null;

/** Team tests must run (and fail when the servers are missing) on CI or when GATEWAY_REQUIRE_TEAM=1. */
export const teamServersRequired = (): boolean => process.env.CI !== undefined || process.env.GATEWAY_REQUIRE_TEAM === '1';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RunningServer {
  url: string;
  /** The server's process (as root, PostgreSQL's is `runuser`'s, the postmaster its child). */
  pid: number;
  stop(): Promise<void>;
  /** PostgreSQL only: stops the server keeping its data, and starts it again on the same port. */
  pause?(): Promise<void>;
  resume?(): Promise<void>;
}

const isRoot = (): boolean => process.getuid?.() === 0;

function runAs(cmd: string, args: string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

async function waitFor(what: string, check: () => Promise<boolean>, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not start within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function stopChild(child: ChildProcess, dir: string): () => Promise<void> {
  return async () => {
    if (child.exitCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
}

/**
 * Stops PostgreSQL (fast shutdown) and waits for it. As root `child` is runuser, which does not pass signals
 * on: the postmaster is its child, and a signal to runuser alone left it running past the test.
 */
async function stopPostmaster(child: ChildProcess): Promise<void> {
  const postmaster = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  process.kill(postmaster ? Number(postmaster) : (child.pid ?? -1), 'SIGINT');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
}

/** initdb in a temp folder, then `postgres` on a free port (trust auth on loopback only). */
export async function startPostgres(): Promise<RunningServer> {
  const bin = pgBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql');
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-pg-'));
  if (isRoot()) {
    const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(pw.stdout.trim()), Number(gid.stdout.trim()));
  }
  const data = path.join(dir, 'data');
  const [initCmd, initArgs] = runAs(path.join(bin, 'initdb'), ['-D', data, '-U', 'gateway', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const [cmd, args] = runAs(path.join(bin, 'postgres'), [
    '-D', data, '-k', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=300',
  ]);
  const url = `postgres://gateway@127.0.0.1:${port}/postgres`;
  const accepts = async (): Promise<boolean> => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await c.connect();
      return true;
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  let child = spawn(cmd, args, { stdio: 'ignore' });
  await waitFor('postgres', accepts, child);
  return {
    url,
    get pid() {
      return child.pid ?? -1;
    },
    async stop() {
      if (child.exitCode === null) await stopPostmaster(child).catch(() => undefined);
      await stopChild(child, dir)();
    },
    pause: () => stopPostmaster(child),
    async resume() {
      child = spawn(cmd, args, { stdio: 'ignore' });
      await waitFor('postgres', accepts, child);
    },
  };
}

/** A fresh database on the server, so each test file starts empty. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** redis-server without persistence on a free port. */
export async function startRedis(): Promise<RunningServer> {
  const bin = redisServerBin();
  if (!bin) throw new Error('Redis is not installed: apt-get install -y redis-server');
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-redis-'));
  const port = await freePort();
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  await waitFor('redis-server', async () => {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined);
    try {
      await r.connect();
      return (await r.ping()) === 'PONG';
    } finally {
      r.disconnect();
    }
  }, child);
  return { url, pid: child.pid ?? -1, stop: stopChild(child, dir) };
}
