/**
 * A server under test, whatever started it: where to call it, which process serves (its RSS is the row's
 * memory), which processes it keeps resident (their CPU is summed: an `npm exec` parent counts), how long it
 * took to answer its first 200, and how to stop it.
 */
import { rssBytes, sleep } from './common.ts';
import { listeningPid, residentProcesses, signalTree, treePids } from './process-tree.ts';
import type { ResidentProcess } from './process-tree.ts';
import { waitHealthy } from './proc.ts';
import type { Child } from './proc.ts';

export interface Footprint {
  /** The process that listens on the port. */
  mainPid: number;
  /** Its RSS. */
  mainRss: number | null;
  /** Every process of the tree (the main one included), with its RSS. */
  resident: ResidentProcess[];
}

export interface ServerUnderTest {
  url: string;
  /** Headers every call needs (auth, a peer's routing headers). */
  headers: Record<string, string>;
  /** ms from spawn to the first 2xx of its health route. */
  startMs: number;
  rootPid: number;
  /** The process that listens on the port. */
  mainPid: number;
  idle: Footprint;
  stop(): Promise<void>;
}

export function footprint(rootPid: number, mainPid: number): Footprint {
  return { mainPid, mainRss: rssBytes(mainPid), resident: residentProcesses(rootPid) };
}

/** Every live process of the server's tree (CPU time is summed over them). */
export const serverPids = (s: Pick<ServerUnderTest, 'rootPid'>): number[] => treePids(s.rootPid);

export type Readiness = Pick<ServerUnderTest, 'startMs' | 'rootPid' | 'mainPid' | 'idle'>;

/**
 * Waits for the child's first 2xx on `healthUrl`, finds the process listening on `port`, lets it settle
 * (`settleMs`: start-up work and banners end) and reads its idle footprint. A child that never gets ready
 * has its whole tree killed before the error is thrown.
 */
export async function awaitReady(child: Child, port: number, healthUrl: string, opts: { timeoutMs: number; settleMs: number }): Promise<Readiness> {
  try {
    const startMs = await waitHealthy(child, healthUrl, opts.timeoutMs);
    await sleep(opts.settleMs);
    const mainPid = listeningPid(port, treePids(child.pid)) ?? child.pid;
    return { startMs, rootPid: child.pid, mainPid, idle: footprint(child.pid, mainPid) };
  } catch (err) {
    signalTree(child.pid, 'SIGKILL');
    throw err;
  }
}
