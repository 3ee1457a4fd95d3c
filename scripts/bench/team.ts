/**
 * Team mode's cost, on this machine: one gateway on SQLite against one on PostgreSQL + Redis, and one
 * team instance against three sharing the same state. Each gateway is its own process, started with the
 * CLI (`gateway start --no-tui [--database URL --redis URL]`), and its CPU is read from /proc, so the
 * load generator and the fake upstream do not count. PostgreSQL and Redis are not counted either: the
 * row says what a gateway process costs; the databases' own CPU is reported beside it.
 * Every call uses a key with a budget and an RPM limit, so the shared counters are on the path.
 *
 * Runs on its own: `node scripts/bench/team.ts [--calls N] [--concurrency C] [--json FILE]` (prints a
 * markdown table), and as the `team` scenario of `npm run bench` (team-scenario.ts), which runs this file
 * as a child process. Needs Debian's `postgresql` and `redis-server` packages (PostgreSQL runs as
 * `postgres` under root).
 */
import { createServer, request, Agent, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dataPaths } from '../../core/home.ts';
import { openGatewayState } from '../../core/state/open-state.ts';
import { createDatabase, startPostgres, startRedis, teamServersInstalled } from '../../test/team/servers.ts';
import { REPO_ROOT, cpuMs, freePort, sleep } from './common.ts';
import { killAll, spawnNode, type Child } from './proc.ts';
import { treePids } from './process-tree.ts';

const MODEL = 'bench-model';
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }], max_tokens: 16 });
const UPSTREAM_KEY_ENV = 'BENCH_TEAM_UPSTREAM_KEY';

export interface TeamRow {
  label: string;
  instances: number;
  store: 'sqlite' | 'team';
  calls: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the gateway processes (summed) per call, from /proc. */
  gatewayCpuUsPerCall: number | null;
  /** CPU of postgres + redis-server per call (team rows), from /proc. */
  stateCpuUsPerCall: number | null;
  errors: number;
}

export interface TeamBenchResult {
  calls: number;
  concurrency: number;
  rows: TeamRow[];
}

export interface TeamBenchOptions {
  calls: number;
  concurrency: number;
  /** An OpenAI-style base URL (with `/v1`) serving `bench-model`; a minimal one is started when absent. */
  upstreamUrl?: string;
  /** Core for the gateway processes (taskset), or null. */
  cpu: number | null;
  log(msg: string): void;
}

function startUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const answer = JSON.stringify({
    id: 'chatcmpl-bench', object: 'chat.completion', created: 0, model: MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello, benchmark.' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/models')) return void res.end(JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model', created: 0, owned_by: 'bench' }] }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, close: () => new Promise((r) => server.close(() => r())) })));
}

interface LoadResult { rps: number; p50: number; p99: number; errors: number; seconds: number }

async function load(targets: string[], key: string, calls: number, concurrency: number): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const one = (url: string): Promise<void> =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const req = request(`${url}/chat/completions`, { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) } }, (res: IncomingMessage) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) errors++;
          latencies.push(performance.now() - t0);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(BODY);
    });
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < calls) {
      const i = next++;
      await one(targets[i % targets.length]);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { rps: calls / seconds, p50: q(0.5), p99: q(0.99), errors, seconds };
}

async function waitServing(child: Child, baseUrl: string, key: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      const req = request(`${baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
      req.end();
    });
    if (status === 200) return;
    if (child.proc.exitCode !== null) throw new Error(`gateway exited (${child.proc.exitCode}): ${child.tail()}`);
    if (Date.now() > deadline) throw new Error(`gateway not serving within ${timeoutMs} ms: ${child.tail()}`);
    await sleep(100);
  }
}

/** Sum of the CPU (ms) of these processes, or null when /proc cannot tell. */
function totalCpuMs(pids: number[]): number | null {
  let sum = 0;
  for (const pid of pids) {
    const ms = cpuMs(pid);
    if (ms === null) return null;
    sum += ms;
  }
  return sum;
}

const cpuPerCall = (a: number | null, b: number | null, calls: number): number | null => (a === null || b === null ? null : ((b - a) * 1000) / calls);

interface TeamServers { database: string; redis: string; pids: number[] }

async function scenario(label: string, instances: number, team: TeamServers | null, opts: TeamBenchOptions, upstreamUrl: string): Promise<TeamRow> {
  const homes = Array.from({ length: instances }, () => mkdtempSync(path.join(tmpdir(), 'gw-bench-team-')));
  const urls = team ? { database: team.database, redis: team.redis } : undefined;
  const { state } = await openGatewayState({ home: homes[0], team: urls });
  let secret: string;
  try {
    if (!(await state.providers.get('bench'))) {
      await state.providers.add({ name: 'bench', type: 'openai-compatible', preset: null, baseUrl: upstreamUrl, models: [MODEL], priority: 100, keyEnv: UPSTREAM_KEY_ENV, keySource: 'env', options: {} });
      await state.prices.set(MODEL, { inputPerMtok: 1, outputPerMtok: 2 });
    }
    secret = (await state.keys.create({ name: `bench-${Date.now()}`, budgetUsd: 1_000, budgetPeriod: 'total', rpm: 1_000_000 })).secret;
  } finally {
    await state.close();
  }
  const gws: Array<{ child: Child; baseUrl: string }> = [];
  try {
    for (const [i, home] of homes.entries()) {
      const port = await freePort();
      writeFileSync(dataPaths(home).settings, JSON.stringify({ audit: { storeBodies: false } }));
      const teamArgs = team ? ['--database', team.database, '--redis', team.redis] : [];
      const child = spawnNode({
        name: `team-gw-${i}`,
        cpu: opts.cpu,
        args: [path.join(REPO_ROOT, 'bin', 'gateway.js'), 'start', '--no-tui', '--port', String(port), ...teamArgs],
        env: { GATEWAY_HOME: home, [UPSTREAM_KEY_ENV]: 'sk-bench-0123456789' },
      });
      const baseUrl = `http://127.0.0.1:${port}/v1`;
      gws.push({ child, baseUrl });
      await waitServing(child, baseUrl, secret);
    }
    const targets = gws.map((g) => g.baseUrl);
    await load(targets, secret, Math.min(500, opts.calls), opts.concurrency); // warm-up: JIT, pools, counters seeded
    const gwPids = gws.map((g) => g.child.pid);
    const statePids = team?.pids ?? [];
    const g0 = totalCpuMs(gwPids);
    const s0 = team ? totalCpuMs(statePids) : null;
    const r = await load(targets, secret, opts.calls, opts.concurrency);
    const g1 = totalCpuMs(gwPids);
    const s1 = team ? totalCpuMs(statePids) : null;
    opts.log(`team: ${label}: ${r.rps.toFixed(0)} req/s, ${r.errors} errors`);
    return {
      label, instances, store: team ? 'team' : 'sqlite', calls: opts.calls,
      rps: r.rps, p50Ms: r.p50, p99Ms: r.p99,
      gatewayCpuUsPerCall: cpuPerCall(g0, g1, opts.calls),
      stateCpuUsPerCall: team ? cpuPerCall(s0, s1, opts.calls) : null,
      errors: r.errors,
    };
  } finally {
    await Promise.all(gws.map((g) => g.child.stop(10_000)));
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  }
}

/** postgres forks a backend per connection (long-lived, pooled): sum the whole tree under each server. */
const serverTreePids = (roots: number[]): number[] => roots.flatMap((r) => treePids(r));

export async function runTeamBench(opts: TeamBenchOptions): Promise<TeamBenchResult | null> {
  if (!teamServersInstalled()) return null;
  const own = opts.upstreamUrl ? null : await startUpstream();
  const upstreamUrl = opts.upstreamUrl ?? (own as { url: string }).url;
  const [pgServer, redisServer] = await Promise.all([startPostgres(), startRedis()]);
  try {
    const database = await createDatabase(pgServer.url, 'gateway_bench');
    const roots = [pgServer.pid, redisServer.pid];
    const team: TeamServers = { database, redis: redisServer.url, get pids() { return serverTreePids(roots); } };
    const rows = [
      await scenario('1 instance, SQLite', 1, null, opts, upstreamUrl),
      await scenario('1 instance, PostgreSQL + Redis', 1, team, opts, upstreamUrl),
      await scenario('3 instances, PostgreSQL + Redis', 3, team, opts, upstreamUrl),
    ];
    return { calls: opts.calls, concurrency: opts.concurrency, rows };
  } finally {
    await own?.close();
    await pgServer.stop();
    await redisServer.stop();
  }
}

const us = (v: number | null): string => (v === null ? 'n/a' : v.toFixed(0));

export function formatTeam(r: TeamBenchResult): string {
  const out = [
    `### Team mode (${r.calls} calls per row, concurrency ${r.concurrency}, non-stream chat, a key with budget + RPM)`,
    '',
    '| setup | req/s | p50 ms | p99 ms | gateway CPU µs/call | PostgreSQL + Redis CPU µs/call | errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map((x) => `| ${x.label} | ${x.rps.toFixed(0)} | ${x.p50Ms.toFixed(2)} | ${x.p99Ms.toFixed(2)} | ${us(x.gatewayCpuUsPerCall)} | ${x.store === 'team' ? us(x.stateCpuUsPerCall) : '-'} | ${x.errors} |`),
    '',
    'Each gateway is its own process (`gateway start --no-tui`, plus `--database`/`--redis` for team rows), CPU from /proc, summed over the instances; three instances share one machine (and its cores), so their req/s shows the shared state\'s overhead, not a scale-out. PostgreSQL + Redis CPU counts the live server processes (backends that exited during the run are not counted).',
  ];
  return out.join('\n');
}

const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};

async function main(): Promise<number> {
  const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);
  const cpuArg = argValue('cpu');
  const result = await runTeamBench({
    calls: Number(argValue('calls') ?? 2000),
    concurrency: Number(argValue('concurrency') ?? 32),
    upstreamUrl: argValue('upstream'),
    cpu: cpuArg === undefined ? null : Number(cpuArg),
    log,
  });
  if (result === null) {
    log('team: PostgreSQL and Redis are not installed (apt-get install -y postgresql redis-server); skipped.');
    return 0;
  }
  const json = argValue('json');
  if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`\n${formatTeam(result)}\n`);
  return result.rows.some((r) => r.errors > 0) ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    (code) => {
      killAll();
      process.exit(code);
    },
    (err: unknown) => {
      process.stderr.write(`[bench] team failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      killAll();
      process.exit(1);
    },
  );
}
