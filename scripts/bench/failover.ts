/**
 * Failover: two providers for the same model, priority 1 failing every other request with a 500, priority 2
 * healthy. Under the full load (queueing included) and at concurrency 1 (the failover's own cost), on one
 * gateway started as the README says. Zero client errors expected; latency split on `x-gateway-attempts`.
 */
import { FLAKY_PREFIX } from './common.ts';
import { CHAT, loadSpec, statsDelta, upstreamStats } from './context.ts';
import type { Scenario } from './context.ts';
import { startGatewayProcess } from './gateway.ts';
import type { GatewayProcess } from './gateway.ts';
import { runLoad, stats } from './load.ts';
import { describeLoad } from './measure.ts';
import type { FailoverResult } from './results.ts';
import { serverPids } from './server.ts';

export const failoverScenario: Scenario = {
  name: 'failover',
  run: async (ctx) => {
    const { cfg } = ctx;
    const runs = [
      { stream: false, concurrency: cfg.concurrency, seconds: cfg.seconds },
      { stream: true, concurrency: cfg.concurrency, seconds: cfg.seconds },
      { stream: false, concurrency: 1, seconds: Math.max(1, cfg.seconds / 2) },
      { stream: true, concurrency: 1, seconds: Math.max(1, cfg.seconds / 2) },
    ];
    let gw: GatewayProcess | null = null;
    try {
      gw = await startGatewayProcess({
        providers: [
          { name: 'flaky', baseUrl: `${ctx.upBase}${FLAKY_PREFIX}/v1`, priority: 1 },
          { name: 'healthy', baseUrl: `${ctx.upBase}/v1`, priority: 2 },
        ],
        cpu: ctx.serverCpu,
        settings: { routing: { breakerFailures: 1_000_000 } },
      });
      const server = gw;
      for (const run of runs) {
        const mode = run.stream ? 'stream' : 'non-stream';
        const f: FailoverResult = {
          mode,
          concurrency: run.concurrency,
          error: null,
          load: null,
          upstreamDelta: null,
          normal: null,
          failedOver: null,
          addedP50: null,
          addedP99: null,
        };
        ctx.failover.push(f);
        try {
          const before = await upstreamStats(ctx);
          f.load = await runLoad({
            ...loadSpec(ctx, server.url, run.stream, server.headers, CHAT, { mainPid: server.mainPid, pids: () => serverPids(server) }),
            concurrency: run.concurrency,
            seconds: run.seconds,
            warmupSeconds: Math.min(cfg.warmupSeconds, 0.5),
          });
          f.upstreamDelta = statsDelta(before, await upstreamStats(ctx));
          const l = f.load;
          ctx.log(describeLoad(`failover ${mode} c=${run.concurrency}`, l));
          f.normal = l.byAttempts['1'] ?? stats([]);
          f.failedOver = l.byAttempts['2'] ?? stats([]);
          if (f.normal.count > 0 && f.failedOver.count > 0) {
            f.addedP50 = f.failedOver.p50 - f.normal.p50;
            f.addedP99 = f.failedOver.p99 - f.normal.p99;
          }
          if (l.errors > 0)
            ctx.problems.push(`failover ${mode} c=${run.concurrency}: the client saw ${l.errors} errors (${JSON.stringify(l.statuses)}); e.g. ${l.errorSamples[0] ?? ''}`);
          if (f.failedOver.count === 0)
            ctx.problems.push(`failover ${mode} c=${run.concurrency}: no request failed over (the flaky upstream failed ${f.upstreamDelta?.flakyFailed ?? '?'})`);
        } catch (err) {
          f.error = (err as Error).message;
          ctx.problems.push(`failover ${mode} c=${run.concurrency}: ${f.error}`);
        }
      }
    } catch (err) {
      ctx.problems.push(`failover: ${(err as Error).message}`);
    } finally {
      await gw?.stop();
    }
  },
};
