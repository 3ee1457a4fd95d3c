/**
 * One row of the table, whatever the target: start it (timed to its first 200), read its idle footprint,
 * load it non-stream then stream (and with a 100 KB prompt when asked), check that every answer came from
 * the fake upstream, optionally probe clients leaving mid-request, stop it.
 */
import { rssBytes } from './common.ts';
import { BIG_CHAT, CHAT, loadSpec, statsDelta, upstreamStats } from './context.ts';
import type { Api, BenchContext } from './context.ts';
import { runLoad } from './load.ts';
import type { LoadResult } from './load.ts';
import { emptyTarget } from './results.ts';
import type { TargetResult } from './results.ts';
import { serverPids } from './server.ts';
import type { ServerUnderTest } from './server.ts';

export function describeLoad(label: string, l: LoadResult): string {
  const extra = l.ttfb ? ` ttft p50 ${l.ttfb.p50.toFixed(2)} ms` : '';
  return `${label}: ${l.rps.toFixed(0)} req/s, p50 ${l.latency.p50.toFixed(2)} ms, p99 ${l.latency.p99.toFixed(2)} ms${extra}, errors ${l.errors}${l.serverCpuPerSec !== null ? `, server CPU ${(l.serverCpuPerSec / 10).toFixed(0)}% = ${(l.serverCpuUsPerReq ?? 0).toFixed(0)} µs/req` : ''}`;
}

export interface TargetSpec<S extends ServerUnderTest> {
  name: string;
  label: string;
  api?: Api;
  /** Also measure non-stream calls with a ~100 KB prompt. */
  bigPrompt?: boolean;
  /** Probe clients leaving mid-request (pass-through proxies: the probe uses the upstream's `/slow` paths). */
  probeClientAbort?: (ctx: BenchContext, server: S) => Promise<TargetResult['clientAbort']>;
  note?: string;
  /** null: measure the fake upstream itself (the `direct` row). */
  start: ((ctx: BenchContext) => Promise<S>) | null;
  /** Stops the server; may check what it recorded (the gateway's audit rows). */
  stop?: (ctx: BenchContext, server: S, t: TargetResult) => Promise<void>;
}

async function runOne(
  ctx: BenchContext,
  t: TargetResult,
  label: string,
  origin: string,
  stream: boolean,
  headers: Record<string, string>,
  api: Api,
  server?: ServerUnderTest,
): Promise<LoadResult> {
  const l = await runLoad(loadSpec(ctx, origin, stream, headers, api, server ? { mainPid: server.mainPid, pids: () => serverPids(server) } : undefined));
  ctx.log(describeLoad(`${t.name} ${label}`, l));
  if (l.errors > 0) ctx.problems.push(`${t.name} ${label}: ${l.errors} failed requests (${JSON.stringify(l.statuses)}); e.g. ${l.errorSamples[0] ?? ''}`);
  return l;
}

/**
 * A freshly started server runs unoptimised code until V8 has seen enough calls: load it before measuring, so
 * every row compares servers that have settled (warmup-curve.ts shows the way there). Failures still count.
 */
export async function warmUp(ctx: BenchContext, name: string, origin: string, headers: Record<string, string>, api: Api, server: Pick<ServerUnderTest, 'mainPid' | 'rootPid'>): Promise<void> {
  const half = ctx.cfg.serverWarmupSeconds / 2;
  if (half <= 0) return;
  for (const stream of [false, true]) {
    const spec = loadSpec(ctx, origin, stream, headers, api, { mainPid: server.mainPid, pids: () => serverPids(server) });
    const l = await runLoad({ ...spec, seconds: half, warmupSeconds: 0 });
    if (l.errors > 0) ctx.problems.push(`${name} warm-up (${stream ? 'stream' : 'non-stream'}): ${l.errors} failed requests (${JSON.stringify(l.statuses)})`);
  }
}

/** Both modes (and the big prompt) against one server; the upstream counters prove where the answers came from. */
async function measureServer(
  ctx: BenchContext,
  t: TargetResult,
  origin: string,
  headers: Record<string, string>,
  api: Api,
  bigPrompt: boolean,
  server?: ServerUnderTest,
): Promise<void> {
  if (server) await warmUp(ctx, t.name, origin, headers, api, server);
  const before = await upstreamStats(ctx);
  t.nonStream = await runOne(ctx, t, 'non-stream', origin, false, headers, api, server);
  const middle = await upstreamStats(ctx);
  t.stream = await runOne(ctx, t, 'stream', origin, true, headers, api, server);
  const after = await upstreamStats(ctx);
  if (bigPrompt) t.bigPrompt = await runOne(ctx, t, '100 KB prompt', origin, false, headers, BIG_CHAT, server);
  const end = await upstreamStats(ctx);
  t.upstreamDelta = statsDelta(before, end);
  t.upstreamConnections = { nonStream: middle.connections - before.connections, stream: after.connections - middle.connections };
  if (server) {
    const peaks = [t.nonStream.serverRssMax, t.stream.serverRssMax, t.bigPrompt?.serverRssMax].filter((x): x is number => typeof x === 'number');
    t.loadedRss = peaks.length ? Math.max(...peaks) : null;
    t.rssAfterLoad = rssBytes(server.mainPid);
  }
  // Every answered request must have reached the fake upstream (warm-ups add more).
  const d = t.upstreamDelta;
  const answeredPlain = t.nonStream.requests - t.nonStream.errors + (t.bigPrompt ? t.bigPrompt.requests - t.bigPrompt.errors : 0);
  if (d.chat < answeredPlain || d.stream < t.stream.requests - t.stream.errors) {
    ctx.problems.push(
      `${t.name}: the fake upstream saw ${d.chat} non-stream + ${d.stream} stream requests, fewer than the ${answeredPlain} + ${t.stream.requests - t.stream.errors} answered: responses did not come from it`,
    );
  }
}

export async function runTarget<S extends ServerUnderTest>(ctx: BenchContext, spec: TargetSpec<S>): Promise<TargetResult> {
  const t = emptyTarget(spec.name, spec.label);
  t.note = spec.note ?? null;
  ctx.targets.push(t);
  const api = spec.api ?? CHAT;
  try {
    if (!spec.start) {
      await measureServer(ctx, t, ctx.upBase, {}, api, spec.bigPrompt === true);
      return t;
    }
    const server = await spec.start(ctx);
    t.startMs = server.startMs;
    t.idle = server.idle;
    try {
      await measureServer(ctx, t, server.url, server.headers, api, spec.bigPrompt === true, server);
      if (spec.probeClientAbort) t.clientAbort = await spec.probeClientAbort(ctx, server);
    } finally {
      if (spec.stop) await spec.stop(ctx, server, t);
      else await server.stop();
    }
  } catch (err) {
    t.error = (err as Error).message;
    ctx.problems.push(`${t.name}: ${t.error}`);
  }
  return t;
}
