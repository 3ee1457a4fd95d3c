/**
 * The gateway before and after an idle spell: one gateway, started as the README starts it on the main fake
 * upstream, takes the main table's non-stream window, then one with 100 KB prompts, sits idle
 * (BENCH_IDLE_SECONDS, 60), and takes the non-stream window again.
 * V8's memory reducer runs memory-reducing collections on a process gone idle; one used to leave Node's
 * `nextTick` on a slow path for good (~350 ns a tick instead of ~40; `core/gateway/tick-shapes.ts`). That cost
 * only ~2-3 µs a call here, below what two 5 s windows resolve: the verdict (after ≤ 1.2× before) guards
 * against larger losses after idle. A gateway of its own, so the memory scenario's figures stay those of a
 * gateway that only served its streams.
 */
import { mib, rssBytes, sleep } from './common.ts';
import { BIG_CHAT, CHAT, loadSpec } from './context.ts';
import type { Api, Scenario } from './context.ts';
import { startGatewayProcess } from './gateway.ts';
import { runLoad } from './load.ts';
import type { LoadResult } from './load.ts';
import type { IdleSpellResult } from './results.ts';
import { serverPids } from './server.ts';
import { chatProvider } from './targets.ts';

export const idleSpellScenario: Scenario = {
  name: 'idle',
  run: async (ctx) => {
    const seconds = ctx.cfg.idleSeconds;
    const gw = await startGatewayProcess({ providers: chatProvider(ctx), cpu: ctx.serverCpu });
    const window = (api: Api): Promise<LoadResult> =>
      runLoad(loadSpec(ctx, gw.url, false, gw.headers, api, { mainPid: gw.mainPid, pids: () => serverPids(gw) }));
    try {
      const before = await window(CHAT);
      // Calls with 100 KB prompts fill the old generation: its full collections are what set V8's memory reducer
      // going once the process is idle (short non-stream calls alone may never need one).
      const big = await window(BIG_CHAT);
      const rssAfterBigBytes = rssBytes(gw.mainPid);
      ctx.log(`idle spell: ${(before.serverCpuUsPerReq ?? 0).toFixed(0)} µs per call, then 100 KB prompts; idle ${seconds} s`);
      // RSS 30 s into the spell too: what a load of large prompts leaves resident (the memory scenario's streams leave less).
      const first = Math.min(30, seconds);
      await sleep(first * 1000);
      const rss30sIdleBytes = rssBytes(gw.mainPid);
      await sleep((seconds - first) * 1000);
      const rssEndIdleBytes = rssBytes(gw.mainPid);
      const after = await window(CHAT);
      ctx.log(`idle spell: after it ${(after.serverCpuUsPerReq ?? 0).toFixed(0)} µs per call`);
      ctx.idleSpell = {
        idleSeconds: seconds,
        cpuUsPerCallBefore: before.serverCpuUsPerReq,
        cpuUsPerCallAfter: after.serverCpuUsPerReq,
        rpsBefore: before.rps,
        rpsAfter: after.rps,
        errors: before.errors + big.errors + after.errors,
        rssAfterBigBytes,
        rss30sIdleBytes,
        rssEndIdleBytes,
      };
      if (ctx.idleSpell.errors > 0) ctx.problems.push(`idle spell: ${ctx.idleSpell.errors} failed non-stream calls`);
    } finally {
      await gw.stop();
    }
  },
};

export function formatIdleSpell(r: IdleSpellResult): string {
  const us = (v: number | null): string => (v === null ? 'n/a' : `${v.toFixed(0)} µs`);
  return [
    `### The gateway before and after ${r.idleSeconds} s idle (one process, the main table's non-stream window each time)`,
    '',
    '| | CPU per call | req/s |',
    '|---|---:|---:|',
    `| before | ${us(r.cpuUsPerCallBefore)} | ${r.rpsBefore.toFixed(0)} |`,
    `| after ${r.idleSeconds} s idle | ${us(r.cpuUsPerCallAfter)} | ${r.rpsAfter.toFixed(0)} |`,
    '',
    `RSS of the gateway after its 100 KB-prompt window: ${mib(r.rssAfterBigBytes)} at its end, ${mib(r.rss30sIdleBytes)} 30 s later, ${mib(r.rssEndIdleBytes)} after ${r.idleSeconds} s (the gateway's idle release, two quiet checks 5 s apart after the load, runs a full collection and gives glibc's free memory back with \`malloc_trim\`).`,
  ].join('\n');
}
