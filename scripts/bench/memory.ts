/**
 * Memory and the upstream pool under 1,000 concurrent streams: the gateway's RSS idle, at its peak
 * during the load and 30 s after it, and the time to first byte of the streams that arrived past the
 * pool size (they wait for a free upstream connection: `x-gateway-queued-ms` says how long) next to
 * those that got a connection at once. Streams last ~5 s (50 chunks, 100 ms apart) so they overlap.
 *
 * Env: BENCH_MEMORY_STREAMS (1000), BENCH_MEMORY_SETTLE_SECONDS (30), BENCH_MEMORY_POOL (256, the default).
 */
import path from 'node:path';
import { Pool } from 'undici';
import { BENCH_DIR, STREAM_BODY, freePort, mib, rssBytes, sleep } from './common.ts';
import { startGatewayProcess } from './gateway.ts';
import { stats } from './load.ts';
import type { Stats } from './load.ts';
import { spawnNode, waitForLine } from './proc.ts';

export interface MemoryResult {
  streams: number;
  poolSize: number;
  streamChunks: number;
  chunkDelayMs: number;
  errors: number;
  /** RSS of the gateway process (the one that listens). */
  idleRss: number | null;
  peakRss: number | null;
  rssAfterSettle: number | null;
  /** The other processes of its tree (an `npm exec` parent), idle: their RSS is not in the figures above. */
  othersIdleRss: number;
  settleSeconds: number;
  /** Streams that got an upstream connection at once, and those that waited for one. */
  ttfbImmediate: Stats;
  ttfbQueued: Stats;
  queuedMs: Stats;
  wallMs: number;
}

const envNumber = (name: string, fallback: number): number => {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

export async function runMemoryBench(opts: { serverCpu: number | null; clientCpu: number | null; log: (m: string) => void }): Promise<MemoryResult> {
  const streams = envNumber('BENCH_MEMORY_STREAMS', 1000);
  const settleSeconds = envNumber('BENCH_MEMORY_SETTLE_SECONDS', 30);
  const poolSize = envNumber('BENCH_MEMORY_POOL', 256);
  const streamChunks = 50;
  const chunkDelayMs = 100;

  const upPort = await freePort();
  const upstream = spawnNode({
    name: 'slow-upstream',
    cpu: opts.clientCpu,
    args: [path.join(BENCH_DIR, 'upstream.ts'), '--port', String(upPort), '--chunks', String(streamChunks), '--delay-ms', String(chunkDelayMs)],
  });
  await waitForLine(upstream, /^READY /, 15_000);
  const gw = await startGatewayProcess({
    providers: [{ name: 'slow', baseUrl: `http://127.0.0.1:${upPort}/v1`, priority: 1 }],
    cpu: opts.serverCpu,
    settings: { upstream: { connections: poolSize } },
  });
  const client = new Pool(gw.url, { connections: streams, pipelining: 1 });
  let peakRss = gw.idle.mainRss;
  const sampler = setInterval(() => {
    const r = rssBytes(gw.mainPid);
    if (r !== null && (peakRss === null || r > peakRss)) peakRss = r;
  }, 200);
  const immediate: number[] = [];
  const queued: number[] = [];
  const queuedMs: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  try {
    await Promise.all(
      Array.from({ length: streams }, async () => {
        const start = performance.now();
        try {
          const res = await client.request({
            method: 'POST',
            path: '/v1/chat/completions',
            headers: { ...gw.headers, 'content-type': 'application/json' },
            body: STREAM_BODY,
            headersTimeout: 120_000,
            bodyTimeout: 120_000,
          });
          // Headers go out with the first upstream event, so they mark the first byte.
          const ttfb = performance.now() - start;
          const waited = Number(res.headers['x-gateway-queued-ms'] ?? 0);
          const text = await res.body.text();
          if (res.statusCode !== 200 || !text.includes('[DONE]')) {
            errors++;
            return;
          }
          if (waited > 0) {
            queued.push(ttfb);
            queuedMs.push(waited);
          } else immediate.push(ttfb);
        } catch {
          errors++;
        }
      }),
    );
  } finally {
    clearInterval(sampler);
    await client.close();
  }
  const wallMs = performance.now() - t0;
  opts.log(`memory: ${streams} streams in ${(wallMs / 1000).toFixed(1)} s, ${queued.length} queued, ${errors} errors, peak RSS ${mib(peakRss)}; settling ${settleSeconds} s`);
  await sleep(settleSeconds * 1000);
  const rssAfterSettle = rssBytes(gw.mainPid);
  await gw.stop();
  await upstream.stop();
  return {
    streams,
    poolSize,
    streamChunks,
    chunkDelayMs,
    errors,
    idleRss: gw.idle.mainRss,
    othersIdleRss: gw.idle.resident.filter((p) => p.pid !== gw.idle.mainPid).reduce((n, p) => n + (p.rss ?? 0), 0),
    peakRss,
    rssAfterSettle,
    settleSeconds,
    ttfbImmediate: stats(immediate),
    ttfbQueued: stats(queued),
    queuedMs: stats(queuedMs),
    wallMs,
  };
}

export function formatMemory(m: MemoryResult): string {
  const s = (x: Stats) => (x.count === 0 ? 'n/a' : `p50 ${x.p50.toFixed(0)} ms, p99 ${x.p99.toFixed(0)} ms, max ${x.max.toFixed(0)} ms (${x.count})`);
  return [
    `### Memory and the upstream pool: ${m.streams} concurrent streams (pool ${m.poolSize} per provider, ${m.streamChunks} chunks ${m.chunkDelayMs} ms apart)`,
    '',
    '| | value |',
    '|---|---:|',
    `| RSS idle (gateway process) | ${mib(m.idleRss)}${m.othersIdleRss > 0 ? ` (+ ${mib(m.othersIdleRss)} in its parent processes)` : ''} |`,
    `| RSS peak under load | ${mib(m.peakRss)} |`,
    `| RSS ${m.settleSeconds} s after | ${mib(m.rssAfterSettle)} |`,
    `| time to first byte, streams with a connection at once | ${s(m.ttfbImmediate)} |`,
    `| time to first byte, streams past the pool size | ${s(m.ttfbQueued)} |`,
    `| their \`x-gateway-queued-ms\` | ${s(m.queuedMs)} |`,
    `| failed streams | ${m.errors} |`,
    `| wall time | ${(m.wallMs / 1000).toFixed(1)} s |`,
  ].join('\n');
}
