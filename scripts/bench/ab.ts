/**
 * `node scripts/bench/ab.ts OTHER_CHECKOUT`: CPU per call of this checkout's gateway (A) against another
 * checkout's (B), as `npm run bench` starts them (servers on CPU 0, the fake upstream and the load on CPU 1).
 * One gateway is alive at a time; A and B take turns (A B, B A, ...), each a fresh process settled for
 * AB_WARM s, then AB_WINDOWS windows of AB_SECONDS s, of which the median counts. Prints every process's
 * figures and, per side, the median over its processes (all threads, then by thread).
 *
 * Why not two gateways side by side, in alternating windows: that read one side ~5 µs cheaper than the other
 * with the same code in both (an A/A run). Run A/A first (`node scripts/bench/ab.ts .`) to see this VM's noise:
 * here one process's median moves ±4 µs from the next, so a difference under ~3 µs needs many pairs.
 */
import path from 'node:path';
import { BENCH_DIR, CHAT_BODY, REPO_ROOT, STREAM_BODY, freePort } from './common.ts';
import { startGatewayProcess } from './gateway.ts';
import { runLoad } from './load.ts';
import type { LoadSpec } from './load.ts';
import { spawnNode, waitForLine } from './proc.ts';
import { serverPids } from './server.ts';

const other = process.argv[2];
if (!other) {
  console.error('usage: node scripts/bench/ab.ts OTHER_CHECKOUT   (AB_PAIRS=4 AB_WARM=8 AB_WINDOWS=3 AB_SECONDS=4 AB_STREAM=1)');
  process.exit(2);
}
const num = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const pairs = num('AB_PAIRS', 4);
const stream = process.env.AB_STREAM === '1';
const roots = { A: REPO_ROOT, B: path.resolve(other) } as const;
type Side = keyof typeof roots;

/** Adds `value` to the list kept under `key`. */
const append = (lists: Map<string, number[]>, key: string, value: number): void => {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** Each thread's median, as `name µs, ...`. */
const threadMedians = (threads: Map<string, number[]>): string => [...threads].map(([name, us]) => `${name} ${median(us).toFixed(1)}`).join(', ');

const upPort = await freePort();
const upstream = spawnNode({ name: 'upstream', cpu: 1, args: [path.join(BENCH_DIR, 'upstream.ts'), '--port', String(upPort)] });
await waitForLine(upstream, /READY/, 10_000);

const results: Record<Side, { total: number[]; threads: Map<string, number[]> }> = {
  A: { total: [], threads: new Map() },
  B: { total: [], threads: new Map() },
};

async function measure(side: Side): Promise<void> {
  process.env.BENCH_GATEWAY_ROOT = roots[side];
  const gw = await startGatewayProcess({ providers: [{ name: 'up', baseUrl: `http://127.0.0.1:${upPort}/v1`, priority: 1 }], cpu: 0 });
  try {
    const spec = (seconds: number, warmupSeconds: number): LoadSpec => ({
      origin: gw.url,
      path: '/v1/chat/completions',
      body: stream ? STREAM_BODY : CHAT_BODY,
      headers: gw.headers,
      stream,
      concurrency: 16,
      seconds,
      warmupSeconds,
      server: { mainPid: gw.mainPid, pids: () => serverPids(gw) },
    });
    await runLoad(spec(num('AB_WARM', 8), 0));
    const total: number[] = [];
    const threads = new Map<string, number[]>();
    for (let w = 0; w < num('AB_WINDOWS', 3); w++) {
      const r = await runLoad(spec(num('AB_SECONDS', 4), 0.5));
      if (r.serverCpuUsPerReq !== null) total.push(r.serverCpuUsPerReq);
      for (const [name, us] of Object.entries(r.serverThreadCpuUsPerReq ?? {})) append(threads, name, us);
    }
    console.log(`${side}: ${total.map((x) => x.toFixed(1)).join(' / ')} µs per call -> ${median(total).toFixed(1)} (${threadMedians(threads)})`);
    results[side].total.push(median(total));
    for (const [name, us] of threads) append(results[side].threads, name, median(us));
  } finally {
    await gw.stop();
  }
}

try {
  for (let i = 0; i < pairs; i++) for (const side of i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) await measure(side);
} finally {
  await upstream.stop();
}
for (const side of ['A', 'B'] as const) {
  const r = results[side];
  console.log(`${side} (${roots[side]}): median ${median(r.total).toFixed(1)} µs per call over ${r.total.length} processes (${threadMedians(r.threads)})`);
}
