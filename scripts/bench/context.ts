/**
 * What every scenario of the run gets (the configuration, the fake upstream, the cores, where to put its
 * results) and what a scenario is: a name (also its BENCH_ONLY name) and a function that measures and
 * records. run.ts holds the list; a module of its own (e.g. team mode's) adds rows to `targets` or
 * markdown to `sections`.
 */
import { request } from 'undici';
import { BIG_CHAT_BODY, CHAT_BODY, MESSAGES_BODY, MESSAGES_STREAM_BODY, RESPONSES_BODY, RESPONSES_STREAM_BODY, STREAM_BODY } from './common.ts';
import type { BenchConfig } from './common.ts';
import type { LoadSpec } from './load.ts';
import type { MemoryResult } from './memory.ts';
import type { FailoverResult, IdleSpellResult, ProfileResult, TargetResult, UpstreamStats, WarmupCurveResult } from './results.ts';
import type { TeamBenchResult } from './team.ts';

export interface BenchContext {
  cfg: BenchConfig;
  /** The fake upstream's origin (`http://127.0.0.1:PORT`). */
  upBase: string;
  upstreamPid: number;
  /** Cores for the servers under test and for the load (null: unpinned). */
  serverCpu: number | null;
  clientCpu: number | null;
  log(msg: string): void;
  /** Failures: any makes the run exit 1. */
  problems: string[];
  /** Worth reading, not failures. */
  warnings: string[];
  targets: TargetResult[];
  failover: FailoverResult[];
  memory: MemoryResult | null;
  idleSpell: IdleSpellResult | null;
  warmupCurve: WarmupCurveResult | null;
  profiles: ProfileResult[];
  peers: Record<string, string>;
  sections: string[];
  /** Team mode's rows (scripts/bench/team.ts), when that scenario ran. */
  team: TeamBenchResult | null;
  /** The gateway's start command, as printed. */
  gatewayCommand: string;
}

export interface Scenario {
  name: string;
  run(ctx: BenchContext): Promise<void>;
}

/** Which API a target is measured on: chat completions, Anthropic Messages or OpenAI Responses. */
export interface Api {
  path: string;
  body: string;
  streamBody: string;
  /** What a complete stream ends with (default `[DONE]`). */
  endMarker?: string;
}

export const CHAT: Api = { path: '/v1/chat/completions', body: CHAT_BODY, streamBody: STREAM_BODY };
export const MESSAGES: Api = { path: '/v1/messages', body: MESSAGES_BODY, streamBody: MESSAGES_STREAM_BODY, endMarker: 'message_stop' };
// A Responses stream has no [DONE]: it ends with its terminal event.
export const RESPONSES: Api = { path: '/v1/responses', body: RESPONSES_BODY, streamBody: RESPONSES_STREAM_BODY, endMarker: 'event: response.completed' };
/** Chat with a ~100 KB prompt (non-stream only). */
export const BIG_CHAT: Api = { path: '/v1/chat/completions', body: BIG_CHAT_BODY, streamBody: BIG_CHAT_BODY };

export function loadSpec(ctx: BenchContext, origin: string, stream: boolean, headers: Record<string, string>, api: Api, server?: LoadSpec['server']): LoadSpec {
  return {
    origin,
    path: api.path,
    body: stream ? api.streamBody : api.body,
    ...(api.endMarker ? { endMarker: api.endMarker } : {}),
    headers,
    stream,
    concurrency: ctx.cfg.concurrency,
    seconds: ctx.cfg.seconds,
    warmupSeconds: ctx.cfg.warmupSeconds,
    server,
    otherPids: { upstream: ctx.upstreamPid },
  };
}

export async function upstreamStats(ctx: BenchContext): Promise<UpstreamStats> {
  const res = await request(`${ctx.upBase}/__stats`);
  return (await res.body.json()) as UpstreamStats;
}

export const statsDelta = (a: UpstreamStats, b: UpstreamStats): UpstreamStats => ({
  chat: b.chat - a.chat,
  stream: b.stream - a.stream,
  flakyOk: b.flakyOk - a.flakyOk,
  flakyFailed: b.flakyFailed - a.flakyFailed,
  other: b.other - a.other,
  connections: b.connections - a.connections,
  cut: b.cut - a.cut,
});
