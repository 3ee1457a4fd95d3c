/**
 * `npm run bench`: one run that measures, on the same machine and upstream,
 *   direct (client → fake upstream), a bare undici pass-through proxy (the floor), our gateway (the real
 *   thing: auth, routing, cost, batched audit with bodies) and Portkey's gateway,
 * each for non-streaming and streaming chat completions; then the failover scenario (two providers,
 * the first failing every other request). With `--profile` (or BENCH_PROFILE=1) it also CPU-profiles
 * the gateway under non-stream and stream load (measured window only) and summarises the hot frames;
 * the `.cpuprofile` files stay in .bench/profile/ (open them in Chrome DevTools).
 *
 * Env: BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1), BENCH_CONCURRENCY (32), BENCH_STREAM_CHUNKS (32),
 * BENCH_CHUNK_DELAY_MS (0), BENCH_FLAKY_RATE (0.5), BENCH_ONLY (e.g. "bare,gateway"), BENCH_STRICT=1
 * (exit 1 when gateway/bare non-stream throughput < BENCH_MIN_RATIO, 0.8).
 * Prints markdown to stdout and writes .bench/bench-results.json. Exit 1 when a component fails to
 * start or any request fails.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { BENCH_DIR, CHAT_BODY, FLAKY_PREFIX, MESSAGES_BODY, MESSAGES_STREAM_BODY, OUT_DIR, RESPONSES_BODY, RESPONSES_STREAM_BODY, STREAM_BODY, freePort, loadConfig, rssBytes } from './common.ts';
import type { BenchConfig } from './common.ts';
import { startGatewayProcess } from './gateway.ts';
import type { BenchProvider } from './gateway.ts';
import { runLoad, stats } from './load.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { startPortkeyProcess } from './portkey.ts';
import { installCleanup, killAll, setUpPinning, spawnNode, waitForLine, waitHealthy } from './proc.ts';
import type { Child, Pinning } from './proc.ts';
import { summarizeProfile } from './profile.ts';
import { formatMemory, runMemoryBench } from './memory.ts';
import type { MemoryResult } from './memory.ts';
import { computeRatios, formatReport } from './report.ts';
import type { BenchResults, FailoverResult, TargetName, TargetResult, UpstreamStats } from './report.ts';

const OVERALL_TIMEOUT_MS = 15 * 60_000;
const log = (msg: string): void => {
  process.stderr.write(`[bench] ${msg}\n`);
};

async function upstreamStats(base: string): Promise<UpstreamStats> {
  const res = await request(`${base}/__stats`);
  return (await res.body.json()) as UpstreamStats;
}

const delta = (a: UpstreamStats, b: UpstreamStats): UpstreamStats => ({
  chat: b.chat - a.chat,
  stream: b.stream - a.stream,
  flakyOk: b.flakyOk - a.flakyOk,
  flakyFailed: b.flakyFailed - a.flakyFailed,
  other: b.other - a.other,
  connections: b.connections - a.connections,
});

const emptyTarget = (name: TargetName): TargetResult => ({
  name,
  error: null,
  nonStream: null,
  stream: null,
  startMs: null,
  idleRss: null,
  loadedRss: null,
  rssAfterLoad: null,
  upstreamDelta: null,
  upstreamConnections: null,
  audit: null,
  note: null,
});

const maxOf = (...xs: Array<number | null | undefined>): number | null => {
  const v = xs.filter((x): x is number => typeof x === 'number');
  return v.length ? Math.max(...v) : null;
};

function describeLoad(label: string, l: LoadResult): string {
  const extra = l.ttfb ? ` ttft p50 ${l.ttfb.p50.toFixed(2)} ms` : '';
  return `${label}: ${l.rps.toFixed(0)} req/s, p50 ${l.latency.p50.toFixed(2)} ms, p99 ${l.latency.p99.toFixed(2)} ms${extra}, errors ${l.errors}${l.serverCpuPerSec !== null ? `, server CPU ${(l.serverCpuPerSec / 10).toFixed(0)}% = ${(l.serverCpuUsPerReq ?? 0).toFixed(0)} µs/req` : ''}`;
}

async function main(): Promise<number> {
  const cfg: BenchConfig = loadConfig();
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
  const pinning: Pinning = setUpPinning(nproc);
  const serverCpu = pinning.available ? pinning.serverCpu : null;
  const clientCpu = pinning.available ? pinning.clientCpu : null;
  log(`${nproc} CPUs, load ${loadavgAtStart.map((x) => x.toFixed(2)).join(' ')}, node ${process.version}; ${pinning.note}`);

  const problems: string[] = [];
  const targets: TargetResult[] = [];
  const failover: FailoverResult[] = [];
  let portkeyVersion: string | null = null;
  const profiles: BenchResults['profiles'] = [];
  const want = (n: string): boolean => cfg.only === null || cfg.only.has(n);

  // The fake upstream, on the client core.
  const upPort = await freePort();
  const upstream: Child = spawnNode({
    name: 'upstream',
    cpu: clientCpu,
    args: [path.join(BENCH_DIR, 'upstream.ts'), '--port', String(upPort), '--chunks', String(cfg.streamChunks), '--delay-ms', String(cfg.chunkDelayMs), '--flaky-rate', String(cfg.flakyRate)],
  });
  await waitForLine(upstream, /^READY /, 15_000);
  const upBase = `http://127.0.0.1:${upPort}`;
  log(`fake upstream on ${upBase}`);

  /** Which API a target is measured on: chat completions, or Anthropic Messages for the `/v1/messages` row. */
  interface Api {
    path: string;
    body: string;
    streamBody: string;
    endMarker?: string;
  }
  const CHAT: Api = { path: '/v1/chat/completions', body: CHAT_BODY, streamBody: STREAM_BODY };
  const MESSAGES: Api = { path: '/v1/messages', body: MESSAGES_BODY, streamBody: MESSAGES_STREAM_BODY, endMarker: 'message_stop' };
  // A Responses stream has no [DONE]: it ends with its terminal event.
  const RESPONSES: Api = { path: '/v1/responses', body: RESPONSES_BODY, streamBody: RESPONSES_STREAM_BODY, endMarker: 'event: response.completed' };

  const spec = (origin: string, stream: boolean, headers: Record<string, string>, serverPid?: number, api: Api = CHAT): LoadSpec => ({
    origin,
    path: api.path,
    body: stream ? api.streamBody : api.body,
    ...(api.endMarker ? { endMarker: api.endMarker } : {}),
    headers,
    stream,
    concurrency: cfg.concurrency,
    seconds: cfg.seconds,
    warmupSeconds: cfg.warmupSeconds,
    serverPid,
    otherPids: { upstream: upstream.pid },
  });

  /** Both modes against one server; the upstream counters prove where the requests went. */
  async function measure(t: TargetResult, origin: string, headers: Record<string, string>, serverPid?: number, api: Api = CHAT): Promise<void> {
    const before = await upstreamStats(upBase);
    t.nonStream = await runLoad(spec(origin, false, headers, serverPid, api));
    log(describeLoad(`${t.name} non-stream`, t.nonStream));
    const middle = await upstreamStats(upBase);
    t.stream = await runLoad(spec(origin, true, headers, serverPid, api));
    log(describeLoad(`${t.name} stream`, t.stream));
    const after = await upstreamStats(upBase);
    t.upstreamDelta = delta(before, after);
    t.upstreamConnections = { nonStream: middle.connections - before.connections, stream: after.connections - middle.connections };
    if (serverPid) {
      t.loadedRss = maxOf(t.nonStream.serverRssMax, t.stream.serverRssMax);
      t.rssAfterLoad = rssBytes(serverPid);
    }
    for (const [mode, l] of [['non-stream', t.nonStream], ['stream', t.stream]] as const) {
      if (l.errors > 0) problems.push(`${t.name} ${mode}: ${l.errors} failed requests (${JSON.stringify(l.statuses)}); e.g. ${l.errorSamples[0] ?? ''}`);
    }
    // Every answered request must have reached the fake upstream (warm-ups add more).
    const d = t.upstreamDelta;
    if (d.chat < t.nonStream.requests - t.nonStream.errors || d.stream < t.stream.requests - t.stream.errors) {
      problems.push(`${t.name}: the fake upstream saw ${d.chat} chat + ${d.stream} stream requests, fewer than the ${t.nonStream.requests} + ${t.stream.requests} answered: responses did not come from it`);
    }
  }

  // 1. direct
  if (want('direct')) {
    const t = emptyTarget('direct');
    targets.push(t);
    try {
      await measure(t, upBase, {});
    } catch (err) {
      t.error = (err as Error).message;
      problems.push(`direct: ${t.error}`);
    }
  }

  // 2. bare proxy
  if (want('bare')) {
    const t = emptyTarget('bare');
    targets.push(t);
    let child: Child | null = null;
    try {
      const port = await freePort();
      child = spawnNode({ name: 'bare-proxy', cpu: serverCpu, args: [path.join(BENCH_DIR, 'bare-proxy.ts'), '--port', String(port), '--target', upBase] });
      t.startMs = await waitHealthy(child, `http://127.0.0.1:${port}/healthz`, 15_000);
      await new Promise((r) => setTimeout(r, 500));
      t.idleRss = rssBytes(child.pid);
      await measure(t, `http://127.0.0.1:${port}`, {}, child.pid);
    } catch (err) {
      t.error = (err as Error).message;
      problems.push(`bare proxy: ${t.error}`);
    } finally {
      await child?.stop();
    }
  }

  // 3. our gateway
  if (want('gateway')) {
    const t = emptyTarget('gateway');
    targets.push(t);
    try {
      const gw = await startGatewayProcess({ providers: [{ name: 'bench-upstream', baseUrl: `${upBase}/v1`, priority: 1 }], cpu: serverCpu });
      t.startMs = gw.startMs;
      t.idleRss = gw.idleRss;
      try {
        await measure(t, gw.url, { authorization: `Bearer ${gw.key}` }, gw.child.pid);
      } finally {
        t.audit = await gw.stop();
      }
      const answered = (t.nonStream?.requests ?? 0) + (t.stream?.requests ?? 0);
      if (!t.audit) problems.push('gateway: could not read its audit table after the run');
      else if (t.audit.rows < answered) problems.push(`gateway: only ${t.audit.rows} audit rows for ${answered} measured requests`);
      if (t.nonStream && t.nonStream.costed < t.nonStream.requests - t.nonStream.errors) problems.push(`gateway: ${t.nonStream.requests - t.nonStream.costed} non-stream responses without x-gateway-cost-usd`);
      t.note = 'start time = node boot + TypeScript stripping + imports + SQLite open/migrate + listen (the `gateway start` path minus the CLI and TUI).';
    } catch (err) {
      t.error = (err as Error).message;
      problems.push(`gateway: ${t.error}`);
    }
  }

  // 3b. our gateway on /v1/messages, passing Anthropic Messages through to an Anthropic provider
  if (want('messages')) {
    const t = emptyTarget('messages');
    targets.push(t);
    try {
      const gw = await startGatewayProcess({ providers: [{ name: 'bench-anthropic', baseUrl: upBase, priority: 1, type: 'anthropic' }], cpu: serverCpu });
      t.startMs = gw.startMs;
      t.idleRss = gw.idleRss;
      try {
        await measure(t, gw.url, { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, gw.child.pid, MESSAGES);
      } finally {
        t.audit = await gw.stop();
      }
      const answered = (t.nonStream?.requests ?? 0) + (t.stream?.requests ?? 0);
      if (!t.audit) problems.push('messages: could not read its audit table after the run');
      else if (t.audit.rows < answered) problems.push(`messages: only ${t.audit.rows} audit rows for ${answered} measured requests`);
      t.note = 'Anthropic Messages in, the same fake upstream answering in Anthropic\'s format; compare with the chat rows (direct is chat).';
    } catch (err) {
      t.error = (err as Error).message;
      problems.push(`messages: ${t.error}`);
    }
  }

  // 3c. our gateway on /v1/responses, bridged to the same chat upstream (Responses → neutral → chat → Responses events)
  if (want('gateway-responses')) {
    const t = emptyTarget('gateway-responses');
    targets.push(t);
    try {
      const gw = await startGatewayProcess({ providers: [{ name: 'bench-upstream', baseUrl: `${upBase}/v1`, priority: 1 }], cpu: serverCpu });
      t.startMs = gw.startMs;
      t.idleRss = gw.idleRss;
      try {
        await measure(t, gw.url, { authorization: `Bearer ${gw.key}` }, gw.child.pid, RESPONSES);
      } finally {
        t.audit = await gw.stop();
      }
      const answered = (t.nonStream?.requests ?? 0) + (t.stream?.requests ?? 0);
      if (!t.audit) problems.push('gateway-responses: could not read its audit table after the run');
      else if (t.audit.rows < answered) problems.push(`gateway-responses: only ${t.audit.rows} audit rows for ${answered} measured requests`);
      t.note = 'the chat conversation sent as a Responses request (instructions + input items); the gateway parses it, sends chat completions upstream and renders the Response object / the Responses event stream.';
    } catch (err) {
      t.error = (err as Error).message;
      problems.push(`gateway-responses: ${t.error}`);
    }
  }

  // 4. Portkey
  if (want('portkey')) {
    const t = emptyTarget('portkey');
    targets.push(t);
    try {
      const pk = await startPortkeyProcess(upBase, serverCpu);
      portkeyVersion = pk.version;
      t.startMs = pk.startMs;
      t.idleRss = pk.idleRss;
      try {
        await measure(t, pk.url, pk.headers, pk.child.pid);
      } finally {
        await pk.child.stop();
      }
      t.note =
        `called with x-portkey-provider: openai and x-portkey-custom-host: ${upBase}/v1 (no config, cache, retries or log sinks: its plain pass-through mode). ` +
        'Its streams need a shim: with the @hono/node-server 1.19 that npm installs, Portkey 1.15.2 answers every stream with a 500 ("TypeError: immutable", Portkey-AI/gateway#1389); ' +
        'portkey-child.ts re-wraps event-stream fetch() responses as Portkey\'s own fix (PR #1551) does. Non-stream calls are untouched.';
    } catch (err) {
      t.error = (err as Error).message;
      problems.push(`portkey: ${t.error}`);
    }
  }

  // 5. failover: priority 1 fails every other request, priority 2 is healthy. Under the full load
  //    (queueing included) and at concurrency 1 (the failover's own cost), on one gateway process.
  if (want('failover')) {
    const providers: BenchProvider[] = [
      { name: 'flaky', baseUrl: `${upBase}${FLAKY_PREFIX}/v1`, priority: 1 },
      { name: 'healthy', baseUrl: `${upBase}/v1`, priority: 2 },
    ];
    const runs = [
      { stream: false, concurrency: cfg.concurrency, seconds: cfg.seconds },
      { stream: true, concurrency: cfg.concurrency, seconds: cfg.seconds },
      { stream: false, concurrency: 1, seconds: Math.max(1, cfg.seconds / 2) },
      { stream: true, concurrency: 1, seconds: Math.max(1, cfg.seconds / 2) },
    ];
    let gw: Awaited<ReturnType<typeof startGatewayProcess>> | null = null;
    try {
      gw = await startGatewayProcess({ providers, cpu: serverCpu, settings: { routing: { breakerFailures: 1_000_000 } } });
      for (const run of runs) {
        const mode = run.stream ? 'stream' : 'non-stream';
        const f: FailoverResult = { mode, concurrency: run.concurrency, error: null, load: null, upstreamDelta: null, normal: null, failedOver: null, addedP50: null, addedP99: null };
        failover.push(f);
        try {
          const before = await upstreamStats(upBase);
          f.load = await runLoad({
            ...spec(gw.url, run.stream, { authorization: `Bearer ${gw.key}` }, gw.child.pid),
            concurrency: run.concurrency,
            seconds: run.seconds,
            warmupSeconds: Math.min(cfg.warmupSeconds, 0.5),
          });
          f.upstreamDelta = delta(before, await upstreamStats(upBase));
          const l = f.load;
          log(describeLoad(`failover ${mode} c=${run.concurrency}`, l));
          f.normal = l.byAttempts['1'] ?? stats([]);
          f.failedOver = l.byAttempts['2'] ?? stats([]);
          if (f.normal.count > 0 && f.failedOver.count > 0) {
            f.addedP50 = f.failedOver.p50 - f.normal.p50;
            f.addedP99 = f.failedOver.p99 - f.normal.p99;
          }
          if (l.errors > 0) problems.push(`failover ${mode} c=${run.concurrency}: the client saw ${l.errors} errors (${JSON.stringify(l.statuses)}); e.g. ${l.errorSamples[0] ?? ''}`);
          if (f.failedOver.count === 0) problems.push(`failover ${mode} c=${run.concurrency}: no request failed over (the flaky upstream failed ${f.upstreamDelta?.flakyFailed ?? '?'})`);
        } catch (err) {
          f.error = (err as Error).message;
          problems.push(`failover ${mode} c=${run.concurrency}: ${f.error}`);
        }
      }
    } catch (err) {
      problems.push(`failover: ${(err as Error).message}`);
    } finally {
      await gw?.stop();
    }
  }

  // 5b. memory and the pool under 1,000 concurrent streams (memory.ts).
  let memory: MemoryResult | null = null;
  if (want('memory')) {
    try {
      memory = await runMemoryBench({ serverCpu, clientCpu, log });
      if (memory.errors > 0) problems.push(`memory: ${memory.errors} of ${memory.streams} streams failed`);
    } catch (err) {
      problems.push(`memory: ${(err as Error).message}`);
    }
  }

  // 6. optional CPU profiles of the gateway, covering exactly the measured window of a non-stream
  //    and a stream run (the profiler is driven over the child's stdin, after the warm-up).
  if (cfg.profile) {
    const dir = path.join(OUT_DIR, 'profile');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    try {
      const gw = await startGatewayProcess({ providers: [{ name: 'bench-upstream', baseUrl: `${upBase}/v1`, priority: 1 }], cpu: serverCpu });
      try {
        for (const stream of [false, true]) {
          const file = path.join(dir, `gateway-${stream ? 'stream' : 'non-stream'}.cpuprofile`);
          const l = await runLoad({
            ...spec(gw.url, stream, { authorization: `Bearer ${gw.key}` }, gw.child.pid),
            beforeMeasure: () => gw.profileStart(),
            afterMeasure: () => gw.profileStop(file),
          });
          log(describeLoad(`profiled gateway ${stream ? 'stream' : 'non-stream'}`, l));
          profiles.push({ mode: stream ? 'stream' : 'non-stream', rps: l.rps, cpuUsPerReq: l.serverCpuUsPerReq, summary: summarizeProfile(file) });
        }
      } finally {
        await gw.stop();
      }
    } catch (err) {
      problems.push(`profile: ${(err as Error).message}`);
    }
  }

  await upstream.stop();

  const ratios = computeRatios(targets);
  const verdicts: BenchResults['verdicts'] = [];
  const r = ratios['gateway/bare throughput (non-stream)'];
  if (r !== null && r !== undefined) {
    verdicts.push({ check: `gateway ≥ ${cfg.minRatio}× the bare proxy's non-streaming throughput`, pass: r >= cfg.minRatio, detail: `${r.toFixed(2)}×` });
  }
  for (const f of failover) {
    if (f.load) {
      verdicts.push({
        check: `failover (${f.mode}, concurrency ${f.concurrency}): the client sees no error`,
        pass: f.load.errors === 0 && (f.failedOver?.count ?? 0) > 0,
        detail: `${f.load.errors} errors in ${f.load.requests} requests; ${f.failedOver?.count ?? 0} failed over`,
      });
    }
  }
  const allTargetsOk = targets.every((t) => !t.error && (t.nonStream?.errors ?? 1) === 0 && (t.stream?.errors ?? 1) === 0);
  verdicts.push({ check: 'every component started and every request succeeded', pass: allTargetsOk && problems.length === 0, detail: problems.length === 0 ? 'no problems' : `${problems.length} problem(s), listed below` });

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
    portkeyVersion,
    targets,
    ratios,
    failover,
    verdicts,
    problems,
    profiles,
  };
  mkdirSync(OUT_DIR, { recursive: true });
  const jsonFile = path.join(OUT_DIR, 'bench-results.json');
  writeFileSync(jsonFile, `${JSON.stringify({ ...results, memory }, null, 2)}\n`);
  process.stdout.write(`${formatReport(results)}\n${memory ? `\n${formatMemory(memory)}\n` : ''}\nResults: ${path.relative(process.cwd(), jsonFile) || jsonFile}\n`);

  const strictFail = cfg.strict && verdicts.some((v) => !v.pass);
  return problems.length > 0 || strictFail ? 1 : 0;
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
