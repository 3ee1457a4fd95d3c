/** The benchmark's results: their shape, written as .bench/bench-results.json and printed by report.ts. */
import type { TeamBenchResult } from './team.ts';
import type { AuditSummary } from './gateway.ts';
import type { LoadResult, Stats } from './load.ts';
import type { MemoryResult } from './memory.ts';
import type { ProfileSummary } from './profile.ts';
import type { Footprint } from './server.ts';
import type { ThreadGroup } from './thread-cpu.ts';

export interface UpstreamStats {
  chat: number;
  stream: number;
  flakyOk: number;
  flakyFailed: number;
  other: number;
  connections: number;
  /** Streams whose client left before their end. */
  cut: number;
}

/** Well-known rows (other scenario modules may add rows under names of their own). */
export const TARGET = {
  direct: 'direct',
  lean: 'lean',
  leanV8: 'lean-v8',
  bare: 'bare',
  gateway: 'gateway',
  messages: 'messages',
  responses: 'gateway-responses',
  portkey: 'portkey',
  litellm: 'litellm',
} as const;

export interface TargetResult {
  /** Key of the row (`lean`, `gateway`, ...), also its BENCH_ONLY name. */
  name: string;
  label: string;
  error: string | null;
  /** Why the row was not measured (a peer that is not installed), when it was skipped. */
  skipped: string | null;
  nonStream: LoadResult | null;
  stream: LoadResult | null;
  /** Non-stream calls with a ~100 KB prompt, when the row has them. */
  bigPrompt: LoadResult | null;
  startMs: number | null;
  idle: Footprint | null;
  loadedRss: number | null;
  rssAfterLoad: number | null;
  /** Requests the fake upstream saw during this target's runs (warm-ups included). */
  upstreamDelta: UpstreamStats | null;
  /** TCP connections the fake upstream accepted during each mode (warm-up included): keep-alive reuse. */
  upstreamConnections: { nonStream: number; stream: number } | null;
  /** Whether the server is still healthy after clients left mid-upload and mid-stream, and cut the upstream stream. */
  clientAbort: { survived: boolean; upstreamCut: boolean; detail: string } | null;
  audit: AuditSummary | null;
  note: string | null;
  /**
   * CPU µs per call in each round, when the row was measured more than once (rounds.ts): the row then shows,
   * per mode, the round with the median CPU.
   */
  rounds: { nonStream: number[]; stream: number[]; bigPrompt: number[] } | null;
}

/** The idle scenario (idle-spell.ts): one gateway's CPU per non-stream call before and after an idle spell. */
export interface IdleSpellResult {
  idleSeconds: number;
  cpuUsPerCallBefore: number | null;
  cpuUsPerCallAfter: number | null;
  rpsBefore: number;
  rpsAfter: number;
  errors: number;
  /** RSS (bytes) of the serving process at the end of the 100 KB window, 30 s into the idle spell, and at its end. */
  rssAfterBigBytes: number | null;
  rss30sIdleBytes: number | null;
  rssEndIdleBytes: number | null;
}

/** One second of load in the warm-up scenario (warmup-curve.ts). */
export interface CurveWindow {
  /** Seconds of load before this window began. */
  second: number;
  rps: number;
  cpuUsPerCall: number | null;
  /** The same split by thread group (request thread, worker threads, V8 helpers...). */
  byThread: Partial<Record<ThreadGroup, number>> | null;
}

/** The warm-up scenario: the lean floor and the gateway, each freshly started, second by second under load. */
export interface WarmupCurveResult {
  lean: CurveWindow[];
  gateway: CurveWindow[];
  /** CPU per call over the last `steadySeconds` windows (calls-weighted), and the gateway's ratio to the floor there. */
  steadySeconds: number;
  steady: { lean: number | null; gateway: number | null; ratio: number | null };
  /** The same over seconds 1-6, where the main table's non-stream window lies (its warm-up is 1 s, its window 5 s by default). */
  early: { lean: number | null; gateway: number | null; ratio: number | null };
}

export interface FailoverResult {
  mode: 'non-stream' | 'stream';
  concurrency: number;
  error: string | null;
  load: LoadResult | null;
  upstreamDelta: UpstreamStats | null;
  /** Requests answered on the first attempt vs after failing over (x-gateway-attempts). */
  normal: Stats | null;
  failedOver: Stats | null;
  addedP50: number | null;
  addedP99: number | null;
}

export interface Verdict {
  check: string;
  /** null: could not be judged in this run (a row missing). */
  pass: boolean | null;
  detail: string;
}

export interface ProfileResult {
  mode: 'non-stream' | 'stream' | '100 KB prompt';
  rps: number;
  cpuUsPerReq: number | null;
  summary: ProfileSummary;
}

export interface BenchResults {
  startedAt: string;
  durationSec: number;
  machine: { nproc: number; loadavgAtStart: number[]; loadavgAtEnd: number[]; node: string; cpu: string; platform: string; memTotalMiB: number };
  config: Record<string, unknown>;
  pinning: { available: boolean; note: string };
  /** The command the gateway rows were started with. */
  gatewayCommand: string;
  /** Versions of the peers that ran. */
  peers: Record<string, string>;
  targets: TargetResult[];
  ratios: Record<string, number | null>;
  failover: FailoverResult[];
  memory: MemoryResult | null;
  idleSpell: IdleSpellResult | null;
  warmupCurve: WarmupCurveResult | null;
  goals: Verdict[];
  verdicts: Verdict[];
  problems: string[];
  warnings: string[];
  profiles: ProfileResult[];
  /** Markdown from scenario modules with sections of their own. */
  sections: string[];
  /** Team mode: one instance against three, SQLite against PostgreSQL + Redis (null when not run). */
  team: TeamBenchResult | null;
}

export const emptyTarget = (name: string, label: string): TargetResult => ({
  name,
  label,
  error: null,
  skipped: null,
  nonStream: null,
  stream: null,
  bigPrompt: null,
  startMs: null,
  idle: null,
  loadedRss: null,
  rssAfterLoad: null,
  upstreamDelta: null,
  upstreamConnections: null,
  clientAbort: null,
  audit: null,
  note: null,
  rounds: null,
});
