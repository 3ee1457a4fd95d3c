/**
 * A long-running command typed into a shell (`gateway start` in "terminal 1"): bash `exec`s the line, so
 * the signal `stop()` sends reaches the command itself, as Ctrl-C would.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface Shell {
  readonly stdout: string;
  readonly stderr: string;
  /** The first match of `re` in that stream; rejects if the command exits first or at the deadline. */
  waitFor(re: RegExp, where?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpExecArray>;
  /** SIGTERM (SIGKILL after 30 s: a loaded machine may take a while to drain and flush); resolves with the exit code. */
  stop(): Promise<{ code: number | null }>;
  exited: Promise<{ code: number | null }>;
}

export function startShell(line: string, env: NodeJS.ProcessEnv, cwd: string): Shell {
  const child = spawn('bash', ['-c', `exec ${line}`], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  return shellOver(child, line, () => child.kill('SIGTERM'));
}

/** The Shell interface over a running child; `signal` is how `stop()` asks it to stop. */
export function shellOver(child: ChildProcess, line: string, signal: () => void): Shell {
  let stdout = '';
  let stderr = '';
  let done = false;
  const exited = new Promise<{ code: number | null }>((resolve) =>
    child.once('exit', (code) => {
      done = true;
      resolve({ code });
    }),
  );
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    async waitFor(re, where = 'stdout', timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const m = re.exec(where === 'stdout' ? stdout : stderr);
        if (m) return m;
        if (done || Date.now() > until) throw new Error(`${line}: no ${re} in ${where} (${done ? 'it exited' : 'timed out'}); stdout: ${stdout}; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (!done) {
        signal();
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}
