/** `server.json` in the data home: where the running gateway listens, for `gateway env`, `top` and the tray. */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ServerState {
  url: string;
  baseUrl: string;
  pid: number;
  startedAt: string;
}

const file = (home: string) => path.join(home, 'server.json');

export function writeServerState(home: string, state: ServerState): void {
  writeFileSync(file(home), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

export function clearServerState(home: string, pid = process.pid): void {
  const s = readServerState(home);
  if (s && s.pid === pid) rmSync(file(home), { force: true });
}

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The state of a gateway that is still running, or null. */
export function readServerState(home: string): ServerState | null {
  if (!existsSync(file(home))) return null;
  try {
    const s = JSON.parse(readFileSync(file(home), 'utf8')) as ServerState;
    return typeof s.pid === 'number' && processAlive(s.pid) ? s : null;
  } catch {
    return null;
  }
}
