/**
 * `npm run bench`: one run, on the same machine and fake upstream, of every scenario in SCENARIOS below:
 * the fake upstream alone, the lean proxy (the floor every ratio is against), the project's bare-proxy.ts,
 * our gateway started as the README says (chat, Messages pass-through, Responses bridged), Portkey and
 * LiteLLM (when Python is there), the failover scenario, memory under 1,000 concurrent streams and CPU per
 * call before and after an idle spell; then
 * issue 13's goals and the correctness checks. With `--profile` (or BENCH_PROFILE=1) it also CPU-profiles
 * the gateway under load (measured window only); the `.cpuprofile` files stay in .bench/profile/.
 *
 * Env: see scripts/bench/README.md. Prints markdown to stdout and writes .bench/bench-results.json. Exit 1
 * when a component fails to start or any request fails; with BENCH_STRICT=1 also when a goal fails.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { computeRatios, judgeGoals } from './checks.ts';
import { BENCH_DIR, OUT_DIR, freePort, loadConfig } from './common.ts';
import type { Scenario } from './context.ts';
import type { BenchContext } from './context.ts';
import { failoverScenario } from './failover.ts';
import { gatewayStartCommand, prepareStartBundle, readmeMismatch } from './gateway-command.ts';
import { idleSpellScenario } from './idle-spell.ts';
import { warmupCurveScenario } from './warmup-curve.ts';
import { runMemoryBench } from './memory.ts';
import { installCleanup, killAll, setUpPinning, spawnNode, waitForLine } from './proc.ts';
import { profileScenario } from './profile-run.ts';
import { formatReport } from './report.ts';
import type { BenchResults, Verdict } from './results.ts';
import { roundsScenario } from './rounds.ts';
import { teamScenario } from './team-scenario.ts';
import { bareScenario, directScenario, gatewayChatScenario, leanScenario, leanV8Scenario, litellmScenario, messagesScenario, portkeyScenario, responsesScenario } from './targets.ts';

const memoryScenario: Scenario = {
  name: 'memory',
  run: async (ctx) => {
    ctx.memory = await runMemoryBench({ serverCpu: ctx.serverCpu, clientCpu: ctx.clientCpu, log: ctx.log });
    if (ctx.memory.errors > 0) ctx.problems.push(`memory: ${ctx.memory.errors} of ${ctx.memory.streams} streams failed`);
  },
};

/**
 * Everything `npm run bench` runs, in order; BENCH_ONLY picks by name. A scenario module of its own (team
 * mode: scripts/bench/team.ts) goes here and adds rows to ctx.targets or markdown to ctx.sections.
 */
const SCENARIOS: Scenario[] = [
  directScenario,
  leanScenario,
  leanV8Scenario,
  bareScenario,
  gatewayChatScenario,
  roundsScenario,
  messagesScenario,
  responsesScenario,
  portkeyScenario,
  litellmScenario,
  failoverScenario,
  memoryScenario,
  idleSpellScenario,
  warmupCurveScenario,
  teamScenario,
];

const OVERALL_TIMEOUT_MS = 15 * 60_000;
const log = (msg: string): void => {
  process.stderr.write(`[bench] ${msg}\n`);
};

async function main(): Promise<number> {
  const cfg = loadConfig();
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const loadavgAtStart = os.loadavg();
  installCleanup();
  const watchdog = setTimeout(() => {
    log(`overall timeout (${OVERALL_TIMEOUT_MS / 60_000} min): stopping`);
    killAll();
    process.exit(1);
  }, OVERALL_TIMEOUT_MS);
  watchdog.unref();

  const nproc = os.availableParallelism();
  const pinning = setUpPinning(nproc);
  const serverCpu = pinning.available ? pinning.serverCpu : null;
  const clientCpu = pinning.available ? pinning.clientCpu : null;
  log(`${nproc} CPUs, load ${loadavgAtStart.map((x) => x.toFixed(2)).join(' ')}, node ${process.version}; ${pinning.note}`);
  const unknown = cfg.only ? [...cfg.only].filter((n) => !SCENARIOS.some((s) => s.name === n)) : [];
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);

  // The fake upstream, on the client core.
  const upPort = await freePort();
  const upstream = spawnNode({
    name: 'upstream',
    cpu: clientCpu,
    args: [
      path.join(BENCH_DIR, 'upstream.ts'),
      '--port',
      String(upPort),
      '--chunks',
      String(cfg.streamChunks),
      '--delay-ms',
      String(cfg.chunkDelayMs),
      '--flaky-rate',
      String(cfg.flakyRate),
    ],
  });
  await waitForLine(upstream, /^READY /, 15_000);
  const upBase = `http://127.0.0.1:${upPort}`;
  log(`fake upstream on ${upBase}`);

  const command = gatewayStartCommand();
  const ctx: BenchContext = {
    cfg,
    upBase,
    upstreamPid: upstream.pid,
    serverCpu,
    clientCpu,
    log,
    problems: [],
    warnings: [],
    targets: [],
    failover: [],
    memory: null,
    idleSpell: null,
    warmupCurve: null,
    profiles: [],
    peers: {},
    sections: [],
    team: null,
    gatewayCommand: command.text,
  };
  const stale = readmeMismatch(command);
  if (stale) ctx.warnings.push(stale);
  log(prepareStartBundle());

  // The rounds re-measure lean and gateway: they run whenever both rows do.
  const picked = (s: Scenario): boolean => cfg.only === null || cfg.only.has(s.name) || (s === roundsScenario && cfg.only.has('lean') && cfg.only.has('gateway'));
  const scenarios = [...SCENARIOS.filter(picked), ...(cfg.profile ? [profileScenario] : [])];
  for (const s of scenarios) {
    const s0 = performance.now();
    try {
      await s.run(ctx);
    } catch (err) {
      ctx.problems.push(`${s.name}: ${(err as Error).message}`);
    }
    log(`${s.name}: ${((performance.now() - s0) / 1000).toFixed(0)} s`);
  }
  await upstream.stop();

  const verdicts: Verdict[] = ctx.failover
    .filter((f) => f.load)
    .map((f) => ({
      check: `failover (${f.mode}, concurrency ${f.concurrency}): the client sees no error`,
      pass: f.load?.errors === 0 && (f.failedOver?.count ?? 0) > 0,
      detail: `${f.load?.errors} errors in ${f.load?.requests} requests; ${f.failedOver?.count ?? 0} failed over`,
    }));
  const lean = ctx.targets.find((t) => t.name === 'lean');
  if (lean?.clientAbort) {
    verdicts.push({
      check: 'the lean proxy survives clients leaving mid-request and aborts the upstream call',
      pass: lean.clientAbort.survived && lean.clientAbort.upstreamCut,
      detail: lean.clientAbort.detail,
    });
    if (!lean.clientAbort.survived || !lean.clientAbort.upstreamCut) ctx.problems.push(`lean proxy, clients leaving mid-request: ${lean.clientAbort.detail}`);
  }
  verdicts.push({
    check: 'every component started and every request succeeded',
    pass: ctx.problems.length === 0,
    detail: ctx.problems.length === 0 ? 'no problems' : `${ctx.problems.length} problem(s), listed below`,
  });
  const goals = judgeGoals(ctx.targets, ctx.memory, ctx.idleSpell);

  const results: BenchResults = {
    startedAt,
    durationSec: (performance.now() - t0) / 1000,
    machine: {
      nproc,
      loadavgAtStart,
      loadavgAtEnd: os.loadavg(),
      node: process.version,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      platform: `${os.platform()} ${os.release()}`,
      memTotalMiB: Math.round(os.totalmem() / 1048576),
    },
    config: { ...cfg, only: cfg.only ? [...cfg.only] : null },
    pinning: { available: pinning.available, note: pinning.note },
    gatewayCommand: command.text,
    peers: ctx.peers,
    targets: ctx.targets,
    ratios: computeRatios(ctx.targets),
    failover: ctx.failover,
    memory: ctx.memory,
    idleSpell: ctx.idleSpell,
    warmupCurve: ctx.warmupCurve,
    goals,
    verdicts,
    problems: ctx.problems,
    warnings: ctx.warnings,
    profiles: ctx.profiles,
    sections: ctx.sections,
    team: ctx.team,
  };
  mkdirSync(OUT_DIR, { recursive: true });
  const jsonFile = path.join(OUT_DIR, 'bench-results.json');
  writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${formatReport(results)}\n\nResults: ${path.relative(process.cwd(), jsonFile) || jsonFile}\n`);

  const strictFail = cfg.strict && goals.some((v) => v.pass === false);
  return ctx.problems.length > 0 || strictFail ? 1 : 0;
}

main().then(
  (code) => {
    killAll();
    process.exit(code);
  },
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    killAll();
    process.exit(1);
  },
);
