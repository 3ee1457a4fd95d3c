/**
 * `--profile`: CPU profiles of the gateway, started as the README says (made inspectable through
 * NODE_OPTIONS, see inspector-client.ts), covering exactly the measured window of a non-stream and a stream
 * run; summarised in the report, the `.cpuprofile` files kept in .bench/profile/ (open them in Chrome DevTools).
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { OUT_DIR } from './common.ts';
import { BIG_CHAT, CHAT, loadSpec } from './context.ts';
import type { Scenario } from './context.ts';
import { startGatewayProcess } from './gateway.ts';
import { runLoad } from './load.ts';
import { describeLoad, warmUp } from './measure.ts';
import { summarizeProfile } from './profile.ts';
import { serverPids } from './server.ts';
import { chatProvider } from './targets.ts';

export const profileScenario: Scenario = {
  name: 'profile',
  run: async (ctx) => {
    const dir = path.join(OUT_DIR, 'profile');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    try {
      const gw = await startGatewayProcess({ providers: chatProvider(ctx), cpu: ctx.serverCpu, inspectable: true });
      try {
        // Settled as the table's gateway is: a profile of V8 still compiling shows the wrong costs.
        await warmUp(ctx, 'profiled gateway', gw.url, gw.headers, CHAT, gw);
        const runs = [
          { mode: 'non-stream', stream: false, api: CHAT, file: 'gateway-non-stream' },
          { mode: 'stream', stream: true, api: CHAT, file: 'gateway-stream' },
          { mode: '100 KB prompt', stream: false, api: BIG_CHAT, file: 'gateway-100kb' },
        ] as const;
        for (const { mode, stream, api, file: name } of runs) {
          const file = path.join(dir, `${name}.cpuprofile`);
          const l = await runLoad({
            ...loadSpec(ctx, gw.url, stream, gw.headers, api, { mainPid: gw.mainPid, pids: () => serverPids(gw) }),
            beforeMeasure: () => gw.profileStart(),
            afterMeasure: () => gw.profileStop(file),
          });
          ctx.log(describeLoad(`profiled gateway ${mode}`, l));
          ctx.profiles.push({ mode, rps: l.rps, cpuUsPerReq: l.serverCpuUsPerReq, summary: summarizeProfile(file) });
        }
      } finally {
        await gw.stop();
      }
    } catch (err) {
      ctx.problems.push(`profile: ${(err as Error).message}`);
    }
  },
};
