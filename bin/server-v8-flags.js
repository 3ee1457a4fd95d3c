/**
 * V8 settings `gateway start` runs the server with: its inlining budget doubled (V8's defaults are 460 and 920
 * bytes of bytecode). A call's path is many small functions (request, routing, admission, failover, pricing,
 * the audit row) under a few larger ones, and the default cumulative budget stops TurboFan inlining them
 * partway. Measured with `scripts/bench/ab.ts` and in `npm run bench`, which also runs the lean floor with
 * these same flags so the gain they would give any Node proxy shows beside the gateway's (README, Benchmark).
 */
export const SERVER_V8_FLAGS = ['--max-inlined-bytecode-size=920', '--max-inlined-bytecode-size-cumulative=1840'];
