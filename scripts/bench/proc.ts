/**
 * Child processes of the benchmark: spawned pinned to a core with `taskset` when it works, tracked so
 * they are all killed when the benchmark ends or fails, and watched for readiness.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { REPO_ROOT, sleep } from './common.ts';
import { signalTree } from './process-tree.ts';

export interface Pinning {
  available: boolean;
  note: string;
  /** Core for the servers under test (gateways, proxies). */
  serverCpu: number;
  /** Core for the load generator and the fake upstream. */
  clientCpu: number;
}

/** Whether `taskset` exists and two cores are usable; pins this process to the client core if so. */
export function setUpPinning(cores: number): Pinning {
  const none = (note: string): Pinning => ({ available: false, note, serverCpu: 0, clientCpu: 0 });
  if (cores < 2) return none(`only ${cores} core: no pinning (client, upstream and server share it)`);
  const probe = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return none('taskset unavailable (apt-get install -y util-linux): processes not pinned');
  // Pin the load generator (this process, all threads) to core 1.
  const self = spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  if (self.status !== 0) return none('taskset could not pin the load generator: processes not pinned');
  return { available: true, note: 'servers under test on CPU 0; load generator and fake upstream on CPU 1 (taskset)', serverCpu: 0, clientCpu: 1 };
}

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  spawnedAt: number;
  /** The last lines the child wrote (stdout and stderr), for error messages. */
  tail(): string;
  /** Resolves with the exit code (or signal) once the child is gone. */
  exited: Promise<number | string | null>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const children = new Set<Child>();

export interface SpawnOptions {
  name: string;
  cpu: number | null;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Working directory (default: the repository's root). */
  cwd?: string;
  /** Called with each stdout line. */
  onLine?: (line: string) => void;
}

/** Spawns `node ...args` (this Node; pinned to `cpu` when given), with stdin as a lifeline pipe. */
export function spawnNode(opts: SpawnOptions): Child {
  return spawnCommand(process.execPath, opts);
}

/** Spawns `command ...args` (pinned to `cpu` when given: its whole process tree inherits the core). */
export function spawnCommand(command: string, opts: SpawnOptions): Child {
  const [cmd, args] = opts.cpu === null ? [command, opts.args] : ['taskset', ['-c', String(opts.cpu), command, ...opts.args]];
  const spawnedAt = performance.now();
  const proc = spawn(cmd, args, { cwd: opts.cwd ?? REPO_ROOT, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (s: string): void => {
    lines.push(s);
    if (lines.length > 30) lines.shift();
  };
  let buf = '';
  proc.stdout?.setEncoding('utf8');
  proc.stdout?.on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i !== -1; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      keep(line);
      opts.onLine?.(line);
    }
  });
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (d: string) => {
    for (const l of d.split('\n')) if (l.trim()) keep(`[stderr] ${l}`);
  });
  proc.stdin?.on('error', () => undefined);
  const exited = new Promise<number | string | null>((resolve) => {
    proc.once('exit', (code, signal) => resolve(code ?? signal));
    proc.once('error', (err) => {
      keep(`[spawn error] ${err.message}`);
      resolve('spawn-error');
    });
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
    children.delete(child);
  });
  const child: Child = {
    name: opts.name,
    proc,
    pid: proc.pid ?? -1,
    spawnedAt,
    tail: () => lines.join('\n'),
    exited,
    async stop(graceMs = 5_000) {
      if (gone) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!gone) proc.kill('SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  children.add(child);
  return child;
}

const tempDirs = new Set<string>();

/** A temporary folder to delete when the benchmark ends, however it ends. */
export function registerTempDir(dir: string): void {
  tempDirs.add(dir);
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Kills every child still running, with its descendants, and removes temp folders (synchronously: safe in an exit handler). */
export function killAll(): void {
  for (const c of children) signalTree(c.pid, 'SIGKILL');
  children.clear();
  for (const d of tempDirs) {
    try {
      rmSync(d, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
  tempDirs.clear();
}

let hooked = false;
/** Makes sure no child outlives this process, whatever way it ends. */
export function installCleanup(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Waits for a line matching `re` (stdout by default); rejects when the child exits or `timeoutMs` passes. */
export function waitForLine(child: Child, re: RegExp, timeoutMs: number, from: 'stdout' | 'stderr' = 'stdout'): Promise<RegExpExecArray> {
  const stream = from === 'stdout' ? child.proc.stdout : child.proc.stderr;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${child.name}: no "${re.source}" within ${timeoutMs} ms\n${child.tail()}`)), timeoutMs);
    const onData = (d: Buffer | string): void => {
      for (const line of String(d).split('\n')) {
        const m = re.exec(line);
        if (m) {
          finish(null, m);
          return;
        }
      }
    };
    const finish = (err: Error | null, m?: RegExpExecArray): void => {
      clearTimeout(timer);
      stream?.off('data', onData);
      if (err) reject(err);
      else resolve(m as RegExpExecArray);
    };
    stream?.on('data', onData);
    void child.exited.then((code) => finish(new Error(`${child.name} exited (${String(code)}) before it was ready\n${child.tail()}`)));
  });
}

/**
 * Polls `url` until it answers 2xx; returns ms from the child's spawn to that answer. Each probe uses
 * a fresh connection, and probes are 5 ms apart.
 */
export async function waitHealthy(child: Child, url: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  let lastError = '';
  while (performance.now() < deadline) {
    if (exited) throw new Error(`${child.name} exited before it was healthy\n${child.tail()}`);
    try {
      const res = await request(url, { headers: { ...headers, connection: 'close' }, headersTimeout: 2_000, bodyTimeout: 2_000 });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) return performance.now() - child.spawnedAt;
      lastError = `HTTP ${res.statusCode}`;
    } catch (err) {
      lastError = (err as Error).message;
    }
    await sleep(5);
  }
  throw new Error(`${child.name}: ${url} not healthy within ${timeoutMs} ms (${lastError})\n${child.tail()}`);
}
