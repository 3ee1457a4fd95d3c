/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): top functions by self time, time by area
 * (our core/ code, node internals, undici, SQLite, GC, idle) and the inclusive time of our own
 * functions. Used by `run.ts --profile`; also runnable alone: `node scripts/bench/profile.ts FILE`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './common.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FrameTime {
  name: string;
  ms: number;
  pct: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Time not idle (busy CPU on the main thread). */
  busyMs: number;
  topSelf: FrameTime[];
  byArea: FrameTime[];
  /** Our functions (core/) by inclusive time, recursion counted once. */
  ownInclusive: FrameTime[];
}

function shortUrl(url: string): string {
  if (!url) return '';
  let u = url.replace(/^file:\/\//, '');
  if (u.startsWith(REPO_ROOT)) u = path.relative(REPO_ROOT, u);
  u = u.replace(/^.*node_modules\//, 'nm:');
  return u;
}

function frameKey(f: CallFrame): string {
  const name = f.functionName || '(anonymous)';
  const u = shortUrl(f.url);
  return u ? `${name} ${u}:${f.lineNumber + 1}` : name;
}

function area(f: CallFrame): string {
  const u = f.url;
  if (f.functionName === '(idle)') return 'idle';
  if (f.functionName === '(garbage collector)') return 'GC';
  if (f.functionName === '(program)') return 'V8/native (program)';
  if (!u) return 'V8/native builtins';
  if (u.startsWith('node:')) {
    if (/node:(_http|http)/.test(u)) return 'node:http';
    if (/node:(net|stream|internal\/streams|internal\/stream_base|_stream)/.test(u)) return 'node streams/net';
    return 'node internals (other)';
  }
  if (u.includes('node_modules/undici')) return 'undici';
  if (u.includes('node_modules/better-sqlite3')) return 'better-sqlite3 (JS side)';
  if (u.includes('node_modules/')) return `dep: ${u.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+).*$/, '$1')}`;
  if (u.includes('/.start-bundle/')) return 'gateway (start bundle)';
  if (u.includes('/core/gateway/')) return 'core/gateway';
  if (u.includes('/core/storage/')) return 'core/storage';
  if (u.includes('/core/')) return `core/${u.replace(/^.*\/core\/([^/]+).*$/, '$1')}`;
  return 'other';
}

/** The gateway's own code: `core/` in the checkout, or the start bundle `./gateway start` runs (not undici's `lib/core/`). */
const isOwnCode = (url: string): boolean => !url.includes('node_modules/') && (url.includes('/core/') || url.includes('/.start-bundle/'));

export function summarizeProfile(file: string, top = 25): ProfileSummary {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  for (const n of prof.nodes) byId.set(n.id, n);
  // Self time per node from the sample stream (timeDeltas[i] precedes samples[i]).
  const selfUs = new Map<number, number>();
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0;
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + Math.max(0, dt));
  }
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    if (n.callFrame.functionName === '(idle)') idleUs += us;
    const k = frameKey(n.callFrame);
    self.set(k, (self.get(k) ?? 0) + us);
    const a = area(n.callFrame);
    areas.set(a, (areas.get(a) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;

  // Inclusive time per node, then per function of ours (a function on the stack twice counts once).
  const inclusive = new Map<number, number>();
  const incl = (id: number): number => {
    const cached = inclusive.get(id);
    if (cached !== undefined) return cached;
    const n = byId.get(id);
    let t = selfUs.get(id) ?? 0;
    for (const c of n?.children ?? []) t += incl(c);
    inclusive.set(id, t);
    return t;
  };
  const root = prof.nodes[0];
  incl(root.id);
  const own = new Map<string, number>();
  const onStack = new Map<string, number>();
  const walk = (id: number): void => {
    const n = byId.get(id);
    if (!n) return;
    const isOwn = isOwnCode(n.callFrame.url);
    const k = frameKey(n.callFrame);
    if (isOwn) {
      if (!onStack.get(k)) own.set(k, (own.get(k) ?? 0) + (inclusive.get(id) ?? 0));
      onStack.set(k, (onStack.get(k) ?? 0) + 1);
    }
    for (const c of n.children ?? []) walk(c);
    if (isOwn) onStack.set(k, (onStack.get(k) ?? 1) - 1);
  };
  walk(root.id);

  const list = (m: Map<string, number>, denom: number, limit: number): FrameTime[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, ms: us / 1000, pct: denom > 0 ? (100 * us) / denom : 0 }));
  const selfBusy = new Map([...self].filter(([k]) => k !== '(idle)'));
  return {
    file,
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    topSelf: list(selfBusy, busyUs, top),
    byArea: list(new Map([...areas].filter(([k]) => k !== 'idle')), busyUs, 20),
    ownInclusive: list(own, busyUs, 20),
  };
}

export function formatProfile(s: ProfileSummary): string {
  const rows = (items: FrameTime[]): string => items.map((f) => `| ${f.pct.toFixed(1)}% | ${f.ms.toFixed(0)} | \`${f.name.replace(/\|/g, '\\|')}\` |`).join('\n');
  return [
    `Profile: ${path.relative(REPO_ROOT, s.file)} (${(s.totalMs / 1000).toFixed(1)} s sampled, main thread busy ${((100 * s.busyMs) / Math.max(1, s.totalMs)).toFixed(0)}%; percentages are of busy time)`,
    '',
    '**By area (self time)**',
    '',
    '| % busy | ms | area |',
    '|---:|---:|---|',
    rows(s.byArea),
    '',
    '**Top functions by self time**',
    '',
    '| % busy | ms | function |',
    '|---:|---:|---|',
    rows(s.topSelf),
    '',
    '**Our code (core/ or its start bundle) by inclusive time**',
    '',
    '| % busy | ms | function |',
    '|---:|---:|---|',
    rows(s.ownInclusive),
  ].join('\n');
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node scripts/bench/profile.ts FILE.cpuprofile [TOP]');
    process.exit(2);
  }
  console.log(formatProfile(summarizeProfile(file, Number(process.argv[3] ?? 25))));
}
