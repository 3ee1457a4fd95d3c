/**
 * `npx gateway start` runs the gateway under `npm exec` (often through `sh -c`), and npm does not pass a
 * SIGTERM on: a script or supervisor that stopped the pid it started (npm's) left the gateway running, its port
 * and data-home lock held, with no parent. Under `npm exec`, the launcher's going away is taken as a stop
 * signal. Linux tells the launcher through a shell parent (`/proc`); elsewhere the parent itself is watched.
 */
import { readFileSync } from 'node:fs';

const CHECK_EVERY_MS = 1_000;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh']);

/** The pid whose exit means the user stopped `npx gateway ...`: npm's, above a `sh -c` when there is one. */
export function launcherPid(parent: number, proc = '/proc'): number {
  try {
    const name = readFileSync(`${proc}/${parent}/comm`, 'utf8').trim();
    if (!SHELLS.has(name)) return parent;
    // Field 4 of stat is the ppid; the command name (field 2) is in parentheses and may hold spaces.
    const stat = readFileSync(`${proc}/${parent}/stat`, 'utf8');
    const grand = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(grand) && grand > 1 ? grand : parent;
  } catch {
    return parent;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Under `npm exec`, calls `onGone` once when the launcher (or this process's parent) has gone. */
export function watchLauncher(onGone: () => void, env: NodeJS.ProcessEnv = process.env): void {
  if (env.npm_command !== 'exec') return;
  const parent = process.ppid;
  const launcher = launcherPid(parent);
  const timer = setInterval(() => {
    if (process.ppid === parent && alive(launcher)) return;
    clearInterval(timer);
    onGone();
  }, CHECK_EVERY_MS);
  timer.unref();
}
