/**
 * The lean floor and the gateway (and the floor with the gateway's V8 flags, when that row ran) measured again,
 * in turns (lean, lean-v8, gateway, lean, ...), BENCH_ROUNDS times in all: on a shared VM the same server's CPU
 * per call moves 20-30% from one 5 s window to the next, and one window each made every ratio a draw. Each row
 * then shows, per mode, its median round; every round's figure is kept (`TargetResult.rounds`) and printed.
 */
import type { BenchContext, Scenario } from './context.ts';
import type { LoadResult } from './load.ts';
import type { TargetResult } from './results.ts';
import { gatewayChatScenario, leanScenario, leanV8Scenario } from './targets.ts';

const MODES = ['nonStream', 'stream', 'bigPrompt'] as const;

export const roundsScenario: Scenario = {
  name: 'rounds',
  run: async (ctx) => {
    const arm = (scenario: Scenario) => ({ scenario, row: ctx.targets.find((t) => t.name === scenario.name) });
    const usable = (p: ReturnType<typeof arm>): boolean => p.row !== undefined && !p.row.error && !!p.row.nonStream;
    const required = [arm(leanScenario), arm(gatewayChatScenario)];
    if (ctx.cfg.rounds < 2 || !required.every(usable)) return;
    const leanV8 = arm(leanV8Scenario);
    const pairs = usable(leanV8) ? [required[0], leanV8, required[1]] : required;
    const extra = new Map<TargetResult, TargetResult[]>(pairs.map((p) => [p.row as TargetResult, []]));
    for (let round = 2; round <= ctx.cfg.rounds; round++) {
      for (const p of pairs) {
        ctx.log(`round ${round} of ${ctx.cfg.rounds}: ${p.scenario.name}`);
        const again = await measureAgain(ctx, p.scenario);
        if (again) extra.get(p.row as TargetResult)?.push(again);
      }
    }
    for (const [row, more] of extra) keepMedians(row, more);
  },
};

/** One more measurement of a row, into a context of its own (problems still go to the run's list). */
async function measureAgain(ctx: BenchContext, scenario: Scenario): Promise<TargetResult | null> {
  const sub: BenchContext = { ...ctx, targets: [] };
  await scenario.run(sub);
  const t = sub.targets[0];
  return t && !t.error ? t : null;
}

function keepMedians(row: TargetResult, more: TargetResult[]): void {
  const all = [row, ...more];
  const rounds = { nonStream: [] as number[], stream: [] as number[], bigPrompt: [] as number[] };
  for (const mode of MODES) {
    const loads = all.map((t) => t[mode]).filter((l): l is LoadResult => l !== null && l.serverCpuUsPerReq !== null);
    rounds[mode] = loads.map((l) => l.serverCpuUsPerReq as number);
    if (loads.length === 0) continue;
    const sorted = [...loads].sort((a, b) => (a.serverCpuUsPerReq as number) - (b.serverCpuUsPerReq as number));
    row[mode] = sorted[(sorted.length - 1) >> 1];
  }
  row.rounds = rounds;
}
