/**
 * The lean floor and the gateway from their start, second by second under the main table's non-stream load
 * (BENCH_CURVE_SECONDS one-second windows each, 12 by default; each server freshly started).
 * Both run unoptimised code at first and get cheaper as V8 optimises it. The gateway runs far more
 * JavaScript per call, so it takes longer to settle. The main table's window (after 1 s of warm-up) catches
 * both partway, so this scenario also gives the ratio once both have settled. It has no goal of its own:
 * it says what the main table's figures are made of.
 */
import { CHAT, loadSpec } from './context.ts';
import type { BenchContext, Scenario } from './context.ts';
import { startGatewayProcess } from './gateway.ts';
import { runLoad } from './load.ts';
import type { CurveWindow, WarmupCurveResult } from './results.ts';
import { serverPids } from './server.ts';
import type { ServerUnderTest } from './server.ts';
import { chatProvider, startProxy } from './targets.ts';
import { THREAD_GROUPS } from './thread-cpu.ts';
import type { ThreadGroup } from './thread-cpu.ts';

const STEADY_SECONDS = 4;
/** Seconds 1 to 6 of load: the main table's non-stream window with its default 1 s warm-up and 5 s window. */
const EARLY = { from: 1, to: 6 };

export const warmupCurveScenario: Scenario = {
  name: 'warmup',
  run: async (ctx) => {
    const lean = await curveOf(ctx, 'lean floor', () => startProxy(ctx, 'lean-curve', 'lean-proxy.ts'));
    const gateway = await curveOf(ctx, 'gateway', () => startGatewayProcess({ providers: chatProvider(ctx), cpu: ctx.serverCpu }));
    if (!lean || !gateway) return;
    const n = lean.length;
    const steady = compare(lean.slice(n - STEADY_SECONDS), gateway.slice(n - STEADY_SECONDS));
    const early = compare(lean.slice(EARLY.from, EARLY.to), gateway.slice(EARLY.from, EARLY.to));
    ctx.warmupCurve = { lean, gateway, steadySeconds: STEADY_SECONDS, steady, early };
    ctx.log(`warm-up: settled (last ${STEADY_SECONDS} s) lean ${fmt(steady.lean)}, gateway ${fmt(steady.gateway)} µs per call`);
  },
};

async function curveOf(ctx: BenchContext, label: string, start: () => Promise<ServerUnderTest>): Promise<CurveWindow[] | null> {
  let server: ServerUnderTest;
  try {
    server = await start();
  } catch (err) {
    ctx.problems.push(`warm-up scenario, ${label}: ${(err as Error).message}`);
    return null;
  }
  const windows: CurveWindow[] = [];
  try {
    for (let second = 0; second < ctx.cfg.curveSeconds; second++) {
      const spec = loadSpec(ctx, server.url, false, server.headers, CHAT, { mainPid: server.mainPid, pids: () => serverPids(server) });
      const load = await runLoad({ ...spec, seconds: 1, warmupSeconds: 0 });
      if (load.errors > 0) ctx.problems.push(`warm-up scenario, ${label}: ${load.errors} failed calls in second ${second}`);
      windows.push({ second, rps: load.rps, cpuUsPerCall: load.serverCpuUsPerReq, byThread: load.serverThreadCpuUsPerReq });
    }
  } finally {
    await server.stop();
  }
  ctx.log(`warm-up, ${label}: ${windows.map((w) => fmt(w.cpuUsPerCall)).join(' ')} µs per call, second by second`);
  return windows;
}

/** CPU per call over some windows, weighted by their calls (a second that served more calls counts more). */
function cpuOver(windows: CurveWindow[]): number | null {
  let calls = 0;
  let us = 0;
  for (const w of windows) {
    if (w.cpuUsPerCall === null) return null;
    calls += w.rps;
    us += w.cpuUsPerCall * w.rps;
  }
  return calls === 0 ? null : us / calls;
}

function compare(lean: CurveWindow[], gateway: CurveWindow[]): { lean: number | null; gateway: number | null; ratio: number | null } {
  const l = cpuOver(lean);
  const g = cpuOver(gateway);
  return { lean: l, gateway: g, ratio: l !== null && g !== null && l > 0 ? g / l : null };
}

const fmt = (v: number | null | undefined): string => (v === null || v === undefined ? 'n/a' : v.toFixed(0));
const ratio = (v: number | null): string => (v === null ? 'n/a' : `${v.toFixed(2)}x`);

export function formatWarmupCurve(r: WarmupCurveResult): string {
  const groups = (['MainThread', 'WorkerThread', 'V8Worker'] as ThreadGroup[]).filter((g) => r.gateway.some((w) => (w.byThread?.[g] ?? 0) > 0));
  const out = [
    '### From start to steady state (non-stream, concurrency as above, each server freshly started, one-second windows)',
    '',
    `| second | lean floor µs per call | gateway µs per call | ratio | gateway req/s | ${groups.map((g) => `gateway ${THREAD_GROUPS[g]}`).join(' | ')} |`,
    `|---:|---:|---:|---:|---:|${groups.map(() => '---:|').join('')}`,
  ];
  r.gateway.forEach((g, i) => {
    const l = r.lean[i];
    const x = l?.cpuUsPerCall && g.cpuUsPerCall !== null ? g.cpuUsPerCall / l.cpuUsPerCall : null;
    out.push(`| ${g.second} | ${fmt(l?.cpuUsPerCall)} | ${fmt(g.cpuUsPerCall)} | ${ratio(x)} | ${g.rps.toFixed(0)} | ${groups.map((k) => fmt(g.byThread?.[k])).join(' | ')} |`);
  });
  out.push('');
  out.push(
    `Seconds ${EARLY.from}-${EARLY.to} (where the main table's non-stream window lies): lean ${fmt(r.early.lean)}, gateway ${fmt(r.early.gateway)} µs per call, ${ratio(r.early.ratio)}. ` +
      `Settled (the last ${r.steadySeconds} s): lean ${fmt(r.steady.lean)}, gateway ${fmt(r.steady.gateway)} µs per call, ${ratio(r.steady.ratio)}.`,
  );
  return out.join('\n');
}
