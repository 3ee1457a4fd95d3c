/**
 * The gateway before and after an idle spell: one gateway, started as the README starts it on the main fake
 * upstream, takes the main table's non-stream window, then one with 100 KB prompts, sits idle
 * (BENCH_IDLE_SECONDS, 60), and takes the non-stream window again.
 * V8's memory reducer runs memory-reducing collections on a process gone idle; one used to leave Node's
 * `nextTick` on a slow path for good (~350 ns a tick instead of ~40; `core/gateway/tick-shapes.ts`). That cost
 * only ~2-3 µs a call here, below what two 5 s windows resolve: the verdict (after ≤ 1.2× before) guards
 * against larger losses after idle, and the figures replace the README's old caveat that every other figure
 * is that of a gateway that never sat idle. A gateway of its own, so the memory scenario's figures stay those
 * of a gateway that only served its streams.
 */
import { BIG_CHAT_BODY, CHAT_BODY, sleep } from './common.ts';
import { startGatewayProcess } from './gateway.ts';
import { runLoad } from './load.ts';
import type { LoadResult } from './load.ts';

export interface IdleSpellResult {
  idleSeconds: number;
  /** CPU µs per non-stream call, before and after the idle spell (same process). */
  cpuUsPerCallBefore: number | null;
  cpuUsPerCallAfter: number | null;
  rpsBefore: number;
  rpsAfter: number;
  errors: number;
}

const idleSeconds = (): number => {
  const n = Number(process.env.BENCH_IDLE_SECONDS);
  return Number.isFinite(n) && n > 0 ? n : 60;
};

export interface IdleSpellOptions {
  /** The main fake upstream's origin. */
  upBase: string;
  serverCpu: number | null;
  /** The main table's load shape. */
  load: { concurrency: number; seconds: number; warmupSeconds: number };
  log: (m: string) => void;
}

export async function runIdleSpell(opts: IdleSpellOptions): Promise<IdleSpellResult> {
  const seconds = idleSeconds();
  const gw = await startGatewayProcess({ providers: [{ name: 'bench-upstream', baseUrl: `${opts.upBase}/v1`, priority: 1 }], cpu: opts.serverCpu });
  const window = (body = CHAT_BODY): Promise<LoadResult> =>
    runLoad({
      origin: gw.url,
      path: '/v1/chat/completions',
      body,
      headers: gw.headers,
      stream: false,
      concurrency: opts.load.concurrency,
      seconds: opts.load.seconds,
      warmupSeconds: opts.load.warmupSeconds,
      server: { mainPid: gw.mainPid, pids: () => [gw.mainPid] },
    });
  try {
    const before = await window();
    // Calls with 100 KB prompts fill the old generation: its full collections are what set V8's memory reducer
    // going once the process is idle (short non-stream calls alone may never need one).
    const big = await window(BIG_CHAT_BODY);
    opts.log(`idle spell: ${(before.serverCpuUsPerReq ?? 0).toFixed(0)} µs per call, then 100 KB prompts; idle ${seconds} s`);
    await sleep(seconds * 1000);
    const after = await window();
    opts.log(`idle spell: after it ${(after.serverCpuUsPerReq ?? 0).toFixed(0)} µs per call`);
    return {
      idleSeconds: seconds,
      cpuUsPerCallBefore: before.serverCpuUsPerReq,
      cpuUsPerCallAfter: after.serverCpuUsPerReq,
      rpsBefore: before.rps,
      rpsAfter: after.rps,
      errors: before.errors + big.errors + after.errors,
    };
  } finally {
    await gw.stop();
  }
}

export function formatIdleSpell(r: IdleSpellResult): string {
  const us = (v: number | null): string => (v === null ? 'n/a' : `${v.toFixed(0)} µs`);
  return [
    `### The gateway before and after ${r.idleSeconds} s idle (one process, the main table's non-stream window each time)`,
    '',
    '| | CPU per call | req/s |',
    '|---|---:|---:|',
    `| before | ${us(r.cpuUsPerCallBefore)} | ${r.rpsBefore.toFixed(0)} |`,
    `| after ${r.idleSeconds} s idle | ${us(r.cpuUsPerCallAfter)} | ${r.rpsAfter.toFixed(0)} |`,
  ].join('\n');
}
