/**
 * A closed-loop load generator: `concurrency` workers over one undici Pool (one keep-alive connection
 * each), each sending its next request as soon as the previous answer is fully read. A warm-up phase
 * (discarded) precedes each fixed-duration measurement. Non-stream: throughput and latency
 * percentiles; streams: time to the first body chunk (first SSE event) and to the end of the stream,
 * which must end with `[DONE]`. Any non-2xx status, transport error or truncated stream is an error.
 *
 * While measuring it samples the watched processes' RSS and CPU time from /proc.
 */
import { Pool } from 'undici';
import { cpuMs, rssBytes } from './common.ts';
import { threadCpuMs, threadCpuPerRequest } from './thread-cpu.ts';
import type { ThreadGroup } from './thread-cpu.ts';

export interface LoadSpec {
  origin: string;
  path: string;
  body: string;
  headers?: Record<string, string>;
  stream: boolean;
  /** What the end of a complete stream contains (default `[DONE]`; Anthropic streams end with `message_stop`). */
  endMarker?: string;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  /** The server under test: the RSS of its serving process is sampled; CPU time is summed over all its processes. */
  server?: { mainPid: number; pids: () => number[] };
  /** Other processes whose CPU time is reported (the fake upstream). */
  otherPids?: Record<string, number>;
  /** Called after the warm-up, right before / after the measured phase (e.g. to drive a profiler). */
  beforeMeasure?: () => Promise<void>;
  afterMeasure?: () => Promise<void>;
}

export interface Stats {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** Count per status (`"200"`, `"500"`, `"transport"`, `"truncated"`). */
  statuses: Record<string, number>;
  errorSamples: string[];
  seconds: number;
  rps: number;
  /** Full request latency (to the last body byte), ms. */
  latency: Stats;
  /** Streams: time to the first body chunk, ms. */
  ttfb: Stats | null;
  /** Latency split by the `x-gateway-attempts` header, when present. */
  byAttempts: Record<string, Stats>;
  /** Responses carrying `x-gateway-cost-usd`. */
  costed: number;
  /** Max RSS of the server's serving process during the measurement, bytes. */
  serverRssMax: number | null;
  /** CPU the server used during the measurement: ms per second of wall time (1000 = one full core). */
  serverCpuPerSec: number | null;
  /** Server CPU time per completed request, microseconds. */
  serverCpuUsPerReq: number | null;
  /** The same, split by thread group (thread-cpu.ts); null without /proc. */
  serverThreadCpuUsPerReq: Partial<Record<ThreadGroup, number>> | null;
  otherCpuPerSec: Record<string, number | null>;
  /** This process (the load generator). */
  clientCpuPerSec: number;
}

export function stats(values: number[]): Stats {
  if (values.length === 0) return { count: 0, mean: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN };
  const a = Float64Array.from(values).sort();
  const q = (p: number): number => a[Math.min(a.length - 1, Math.max(0, Math.ceil(p * a.length) - 1))];
  let sum = 0;
  for (const v of a) sum += v;
  return { count: a.length, mean: sum / a.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: a[a.length - 1] };
}

interface Sink {
  record: boolean;
  latency: number[];
  ttfb: number[];
  byAttempts: Map<string, number[]>;
  statuses: Record<string, number>;
  errorSamples: string[];
  errors: number;
  costed: number;
  lastEnd: number;
}

const newSink = (record: boolean): Sink => ({ record, latency: [], ttfb: [], byAttempts: new Map(), statuses: {}, errorSamples: [], errors: 0, costed: 0, lastEnd: 0 });

const DONE = Buffer.from('[DONE]');

async function one(pool: Pool, spec: LoadSpec, headers: Record<string, string>, sink: Sink): Promise<void> {
  const t0 = performance.now();
  let status = 'transport';
  let ok = false;
  let first = -1;
  let attempts: string | undefined;
  let costed = false;
  let sample: string | null = null;
  try {
    const res = await pool.request({ path: spec.path, method: 'POST', headers, body: spec.body });
    status = String(res.statusCode);
    const a = res.headers['x-gateway-attempts'];
    attempts = typeof a === 'string' ? a : undefined;
    costed = res.headers['x-gateway-cost-usd'] !== undefined;
    if (res.statusCode < 200 || res.statusCode >= 300) {
      sample = `HTTP ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`;
    } else {
      let prev: Buffer | null = null;
      let last: Buffer | null = null;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (first < 0) first = performance.now() - t0;
        prev = last;
        last = chunk;
      }
      if (!spec.stream) ok = true;
      else {
        const tail = prev && last ? Buffer.concat([spec.endMarker ? prev : prev.subarray(-16), last]) : (last ?? Buffer.alloc(0));
        const marker = spec.endMarker ? Buffer.from(spec.endMarker) : DONE;
        ok = tail.includes(marker);
        if (!ok) {
          status = 'truncated';
          sample = `stream without ${marker.toString()}; tail: ${tail.toString('utf8').slice(-200)}`;
        }
      }
    }
  } catch (err) {
    sample = `transport: ${(err as Error).message}`;
  }
  const t1 = performance.now();
  if (!sink.record) return;
  sink.lastEnd = t1;
  sink.statuses[status] = (sink.statuses[status] ?? 0) + 1;
  if (!ok) {
    sink.errors++;
    if (sample !== null && sink.errorSamples.length < 5) sink.errorSamples.push(sample);
    return;
  }
  const ms = t1 - t0;
  sink.latency.push(ms);
  if (spec.stream) sink.ttfb.push(first);
  if (costed) sink.costed++;
  if (attempts !== undefined) {
    const list = sink.byAttempts.get(attempts);
    if (list) list.push(ms);
    else sink.byAttempts.set(attempts, [ms]);
  }
}

async function phase(pool: Pool, spec: LoadSpec, seconds: number, sink: Sink): Promise<{ start: number }> {
  const headers = { 'content-type': 'application/json', accept: spec.stream ? 'text/event-stream' : 'application/json', ...spec.headers };
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const worker = async (): Promise<void> => {
    // Bounded: every request ends (body timeout), and no new one starts after the deadline.
    while (performance.now() < deadline) await one(pool, spec, headers, sink);
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  return { start };
}

/** CPU ms used so far by a set of processes (one that has exited counts nothing). */
function cpuOf(pids: number[]): number | null {
  let total: number | null = null;
  for (const pid of pids) {
    const ms = cpuMs(pid);
    if (ms !== null) total = (total ?? 0) + ms;
  }
  return total;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const pool = new Pool(spec.origin, {
    connections: spec.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  try {
    if (spec.warmupSeconds > 0) await phase(pool, spec, spec.warmupSeconds, newSink(false));

    await spec.beforeMeasure?.();
    const sink = newSink(true);
    const server = spec.server;
    let rssMax: number | null = server ? rssBytes(server.mainPid) : null;
    const sampler = server
      ? setInterval(() => {
          const r = rssBytes(server.mainPid);
          if (r !== null && (rssMax === null || r > rssMax)) rssMax = r;
        }, 200)
      : null;
    const pids = server?.pids() ?? [];
    const cpu0 = server ? cpuOf(pids) : null;
    const threads0 = threadCpuMs(pids);
    const others0 = Object.fromEntries(Object.entries(spec.otherPids ?? {}).map(([k, pid]) => [k, cpuMs(pid)]));
    const self0 = process.cpuUsage();
    const { start } = await phase(pool, spec, spec.seconds, sink);
    const wallMs = Math.max(1, sink.lastEnd - start);
    if (sampler) clearInterval(sampler);
    const cpu1 = server ? cpuOf(pids) : null;
    const threads1 = threadCpuMs(pids);
    const self1 = process.cpuUsage(self0);
    const perSec = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : ((b - a) / wallMs) * 1000);
    const otherCpuPerSec: Record<string, number | null> = {};
    for (const [k, pid] of Object.entries(spec.otherPids ?? {})) otherCpuPerSec[k] = perSec(others0[k], cpuMs(pid));
    await spec.afterMeasure?.();

    const completed = sink.latency.length;
    const requests = completed + sink.errors;
    const byAttempts: Record<string, Stats> = {};
    for (const [k, v] of sink.byAttempts) byAttempts[k] = stats(v);
    const serverCpu = cpu0 === null || cpu1 === null ? null : cpu1 - cpu0;
    return {
      requests,
      errors: sink.errors,
      statuses: sink.statuses,
      errorSamples: sink.errorSamples,
      seconds: wallMs / 1000,
      rps: completed / (wallMs / 1000),
      latency: stats(sink.latency),
      ttfb: spec.stream ? stats(sink.ttfb) : null,
      byAttempts,
      costed: sink.costed,
      serverRssMax: rssMax,
      serverCpuPerSec: perSec(cpu0, cpu1),
      serverCpuUsPerReq: serverCpu === null || requests === 0 ? null : (serverCpu * 1000) / requests,
      serverThreadCpuUsPerReq: threadCpuPerRequest(threads0, threads1, requests),
      otherCpuPerSec,
      clientCpuPerSec: ((self1.user + self1.system) / 1000 / wallMs) * 1000,
    };
  } finally {
    await pool.destroy().catch(() => undefined);
  }
}
