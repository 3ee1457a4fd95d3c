/**
 * CPU time per thread of the servers under test, from /proc/PID/task/TID/stat, so the report can say where a
 * call's CPU goes: Node's request thread, worker threads (the gateway's audit writer), V8's helpers (garbage
 * collection and the optimizing compiler) and libuv's pool. A process's total alone could not tell a slower
 * request path from a busier audit thread.
 */
import { readdirSync } from 'node:fs';
import { readProcStat, statCpuMs } from './common.ts';

/** Thread groups, by the name Node and V8 give their threads (anything else, a Python server's threads too, is `other`). */
export const THREAD_GROUPS = {
  MainThread: 'request thread',
  WorkerThread: 'worker threads',
  V8Worker: 'V8 helpers (GC, compiler)',
  'libuv-worker': 'libuv pool',
  other: 'other',
} as const;
export type ThreadGroup = keyof typeof THREAD_GROUPS;

const groupOf = (name: string): ThreadGroup => (name in THREAD_GROUPS ? (name as ThreadGroup) : 'other');

/** CPU ms so far per thread (`pid/tid`), with its group; threads that ended since are simply absent. */
export function threadCpuMs(pids: number[]): Map<string, { group: ThreadGroup; ms: number }> {
  const out = new Map<string, { group: ThreadGroup; ms: number }>();
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      // Null when the thread ended between the listing and the read.
      const stat = readProcStat(`/proc/${pid}/task/${tid}/stat`);
      if (stat) out.set(`${pid}/${tid}`, { group: groupOf(stat.name), ms: statCpuMs(stat.fields) });
    }
  }
  return out;
}

/**
 * CPU µs per request of each thread group between two readings (a thread started in between counts from zero).
 * Null without /proc or without requests.
 */
export function threadCpuPerRequest(
  before: Map<string, { group: ThreadGroup; ms: number }>,
  after: Map<string, { group: ThreadGroup; ms: number }>,
  requests: number,
): Partial<Record<ThreadGroup, number>> | null {
  if (after.size === 0 || requests === 0) return null;
  const out: Partial<Record<ThreadGroup, number>> = {};
  for (const [id, t] of after) {
    const used = t.ms - (before.get(id)?.ms ?? 0);
    if (used > 0) out[t.group] = (out[t.group] ?? 0) + (used * 1000) / requests;
  }
  return out;
}

/** The rows of the report's "by thread" table, for each measured mode of each server row. */
export function formatThreadCpu(
  rows: Array<{ label: string; modes: Array<[string, Partial<Record<ThreadGroup, number>> | null | undefined]> }>,
): string[] {
  const groups = Object.keys(THREAD_GROUPS) as ThreadGroup[];
  const lines: string[] = [];
  for (const row of rows) {
    for (const [mode, split] of row.modes) {
      if (!split) continue;
      const total = groups.reduce((sum, g) => sum + (split[g] ?? 0), 0);
      lines.push(`| ${row.label} | ${mode} | ${groups.map((g) => Math.round(split[g] ?? 0)).join(' | ')} | ${Math.round(total)} |`);
    }
  }
  if (lines.length === 0) return [];
  return [
    '### Server CPU per call, by thread (µs)',
    '',
    `| target | mode | ${groups.map((g) => THREAD_GROUPS[g]).join(' | ')} | total |`,
    `|---|---|${groups.map(() => '---:|').join('')}---:|`,
    ...lines,
    '',
    "From /proc per thread (10 ms ticks), over the same window as the row's CPU figure. The request thread is Node's main thread " +
      '(HTTP, the call itself); worker threads are the gateway\'s audit writer (and its tokenizer and reader when used); V8 helpers ' +
      'collect garbage and compile hot code, which in the first seconds of a process is mostly compiling.',
    '',
  ];
}
