/**
 * One gateway per data home. `gateway.lock` is created exclusively (O_EXCL) before the server starts and
 * holds the owner's pid, then its port and URL once it listens. A second start finds a live owner and
 * names it; a lock left by a process that died (SIGKILL, power loss) is taken over.
 */
import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { dataPaths } from './home.ts';
import { processAlive } from './server-state.ts';

const lockSchema = z.object({
  pid: z.number().int().nonnegative(),
  port: z.number().int().nullable().default(null),
  url: z.string().nullable().default(null),
  startedAt: z.string().optional(),
});
export type LockOwner = z.infer<typeof lockSchema>;

/** Another live gateway holds this data home. */
class GatewayRunningError extends Error {
  readonly owner: LockOwner;
  constructor(home: string, owner: LockOwner) {
    const where = owner.url ? `listening on ${owner.url}` : owner.port !== null ? `on port ${owner.port}` : 'still starting';
    super(
      `Another gateway (${owner.pid > 0 ? `pid ${owner.pid}` : 'pid not written yet'}${owner.port !== null ? `, port ${owner.port}` : ''}) is already running on the data home ${home}, ${where}. ` +
        `Use that one, stop it first${owner.pid > 0 ? ` (kill ${owner.pid})` : ''}, or start this one on another data home with GATEWAY_HOME=/other/folder.`,
    );
    this.name = 'GatewayRunningError';
    this.owner = owner;
  }
}

export interface StartLock {
  /** Records where the owner listens, for the next start's message. */
  listening(port: number, url: string): void;
  /** Removes the lock if this process still owns it. Safe to call twice. */
  release(): void;
}

function mtimeMs(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function readOwner(file: string): LockOwner | null {
  try {
    const parsed = lockSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Takes the data home's lock, or throws GatewayRunningError naming the live owner. */
export function acquireStartLock(home: string, pid = process.pid): StartLock {
  const file = dataPaths(home).lock;
  const state: LockOwner & { startedAt: string } = { pid, port: null, url: null, startedAt: new Date().toISOString() };
  const body = () => `${JSON.stringify(state)}\n`;
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readOwner(file);
      if (owner && owner.pid !== pid && processAlive(owner.pid)) throw new GatewayRunningError(home, owner);
      // An unreadable lock this fresh is another start between its create and its write.
      if (!owner && Date.now() - mtimeMs(file) < 2_000) throw new GatewayRunningError(home, { pid: 0, port: null, url: null });
      if (attempt > 0) throw new Error(`Could not take the lock ${file}: another gateway keeps taking it. Try again.`);
      // Stale (its process is gone) or unreadable: take it over. If two starts race here, the exclusive
      // create of the next attempt lets one win and the other name the winner.
      rmSync(file, { force: true });
      continue;
    }
    try {
      writeSync(fd, body());
    } finally {
      closeSync(fd);
    }
    break;
  }
  let released = false;
  return {
    listening(port, url) {
      state.port = port;
      state.url = url;
      if (readOwner(file)?.pid === pid) writeFileSync(file, body(), { mode: 0o600 });
    },
    release() {
      if (released) return;
      released = true;
      if (readOwner(file)?.pid === pid) rmSync(file, { force: true });
    },
  };
}
