/**
 * A server under test may be a tree of processes (`npx gateway start` is npm exec → sh → node): its
 * processes, which of them listens on the port, and the memory each keeps resident, all from /proc.
 * On a system without /proc every answer degrades to the root process alone.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { readProcStat, rssBytes } from './common.ts';

function parentOf(pid: number): number | null {
  const stat = readProcStat(`/proc/${pid}/stat`);
  return stat === null ? null : Number(stat.fields[1]);
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
}

/** `root` and all its descendants, root first. */
export function treePids(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const ppid = parentOf(pid);
    if (ppid === null) continue;
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The command line of a process, shortened for a report (`npm exec gateway start`, `sh -c gateway start`). */
export function commandOf(pid: number): string {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const line = raw.map((a) => (a.includes('/') && !a.startsWith('-') ? (a.split('/').pop() ?? a) : a)).join(' ');
    return line.length > 60 ? `${line.slice(0, 57)}...` : line;
  } catch {
    return `pid ${pid}`;
  }
}

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT; state 0A is LISTEN; the inode is the 10th field.
      if (f.length > 9 && f[1].endsWith(`:${hex}`) && f[3] === '0A') inodes.add(f[9]);
    }
  }
  return inodes;
}

/** The process of `pids` holding the listening socket on `port` (the one that serves), or null. */
export function listeningPid(port: number, pids: number[]): number | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return pid;
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return null;
}

export interface ResidentProcess {
  pid: number;
  command: string;
  rss: number | null;
}

/** Every process of the tree with its RSS (shared pages count in each, as `ps` shows them). */
export function residentProcesses(root: number): ResidentProcess[] {
  return treePids(root).map((pid) => ({ pid, command: commandOf(pid), rss: rssBytes(pid) }));
}

/** Sends `signal` to every process of the tree, leaves first (best effort). */
export function signalTree(root: number, signal: NodeJS.Signals): void {
  for (const pid of treePids(root).reverse()) {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}
