/**
 * Runs the real `gateway` command (`node bin/gateway.js ...`) against a data home, the way a user
 * would, and returns what it printed and its exit code. `startCli` keeps a long-running command
 * (`start`) alive for the test to talk to, and kills it by its own pid on `stop()`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const GATEWAY_BIN = path.join(REPO_ROOT, 'bin', 'gateway.js');

/**
 * Each `gateway` process loads the TypeScript sources (about a second on an idle 2-core machine, many
 * more when other suites run alongside): tests that run several commands use this timeout.
 */
export const CLI_TEST_TIMEOUT_MS = 90_000;
const RUN_TIMEOUT_MS = 45_000;

export interface CliResult {
  stdout: string;
  stderr: string;
  /** The exit code (null only if a signal ended the process). */
  code: number | null;
}

export interface CliOptions {
  /** The data home (`GATEWAY_HOME`). */
  home: string;
  /** Extra environment variables (merged over the current ones). */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  stdin?: string;
  timeoutMs?: number;
}

function childEnv(opts: CliOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_HOME: opts.home, NO_COLOR: '1', FORCE_COLOR: '0' };
  // Whatever the test runner put there (loaders, inspector flags) is not what a user's shell has.
  delete env.NODE_OPTIONS;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Runs `gateway ...args` to completion. The pinned Node runs it (vitest runs under it). */
export function runCli(args: string[], opts: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GATEWAY_BIN, ...args], { cwd: REPO_ROOT, env: childEnv(opts), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway ${args.join(' ')} did not finish within ${opts.timeoutMs ?? RUN_TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, opts.timeoutMs ?? RUN_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.stdin ?? '');
  });
}

export interface RunningCli {
  child: ChildProcess;
  /** Everything printed so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the first match of `re` in stdout (or stderr with `where`), or fails at the deadline. */
  waitFor(re: RegExp, where?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpExecArray>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGTERM) to this child only, and waits for it to exit (SIGKILL after 5 s). */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts a long-running `gateway ...args` (e.g. `start`). */
export function startCli(args: string[], opts: CliOptions): RunningCli {
  const child = spawn(process.execPath, [GATEWAY_BIN, ...args], { cwd: REPO_ROOT, env: childEnv(opts), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
    notify();
  });
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    notify();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
      notify();
    });
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    waitFor(re, where = 'stdout', timeoutMs = 40_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(where === 'stdout' ? stdout : stderr);
          if (m) {
            cleanup();
            resolve(m);
          } else if (done) {
            cleanup();
            reject(new Error(`gateway exited before printing ${re}; stdout: ${stdout}; stderr: ${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re}; stdout: ${stdout}; stderr: ${stderr}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (!done) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

/** A fresh, empty data home; `cleanup()` deletes it. */
export function tempHome(prefix = 'gw-cli-'): { home: string; cleanup: () => void } {
  const home = mkdtempSync(path.join(tmpdir(), prefix));
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** Polls `fn` every 25 ms until it gives a value (not null or undefined); throws after `deadlineMs`. */
export async function waitFor<T>(what: string, fn: () => T | null | undefined, deadlineMs = 40_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = fn();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The `baseUrl` a started gateway wrote to `<home>/server.json`, once the file holds a whole JSON document. */
export function waitForBaseUrl(home: string, deadlineMs = 40_000): Promise<string> {
  const file = path.join(home, 'server.json');
  return waitFor(
    'server.json',
    () => {
      // The file may be seen between its creation and its content.
      try {
        return (JSON.parse(readFileSync(file, 'utf8')) as { baseUrl: string }).baseUrl;
      } catch {
        return null;
      }
    },
    deadlineMs,
  );
}
