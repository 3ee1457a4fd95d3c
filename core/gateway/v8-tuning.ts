/**
 * V8 settings for the long-running server: its inlining budget doubled (V8's defaults are 460 and 920 bytes
 * of bytecode). A call's path is many small functions (request, routing, admission, failover, pricing, the
 * audit row) under a few larger ones, and the default cumulative budget stops TurboFan inlining them partway.
 * Set once the server listens, not at launch: with them from the first line, start-up's own hot code was
 * compiled with the larger budget too (measured: start to first 200 ~30 ms slower), while the calls' path is
 * optimised under load, later. `npm run bench` runs the lean floor with these same flags as well (`lean-v8`),
 * so what they would give any Node proxy shows beside what they give the gateway.
 */
import v8 from 'node:v8';

export const SERVER_V8_FLAGS: readonly string[] = ['--max-inlined-bytecode-size=920', '--max-inlined-bytecode-size-cumulative=1840'];

/** Sets SERVER_V8_FLAGS but those given on Node's own command line (which win); returns the ones it set. */
export function tuneV8ForServer(execArgv: readonly string[] = process.execArgv, setFlag: (flag: string) => void = v8.setFlagsFromString): string[] {
  const set: string[] = [];
  for (const flag of SERVER_V8_FLAGS) {
    const name = flag.slice(0, flag.indexOf('='));
    // V8 reads `_` and `-` alike in a flag's name.
    const given = execArgv.some((a) => {
      const arg = a.replaceAll('_', '-');
      return arg === name || arg.startsWith(`${name}=`);
    });
    if (given) continue;
    setFlag(flag);
    set.push(flag);
  }
  return set;
}
