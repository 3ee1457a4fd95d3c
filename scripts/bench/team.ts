/**
 * Team mode's cost, on this machine: one gateway on SQLite against one on PostgreSQL + Redis, and one
 * team instance against three sharing the same state, in front of a minimal local upstream. Every call
 * uses a key with a budget and an RPM limit, so the shared counters are on the path. Gateways run in
 * this process; CPU is this process's (client and upstream included), so compare rows, not absolutes.
 * Runs on its own: `node scripts/bench/team.ts [--calls N] [--concurrency C]`; prints a markdown table.
 * Needs Debian's `postgresql` and `redis-server` packages (PostgreSQL runs as `postgres` under root).
 */
import { createServer, request, Agent, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '../../core/gateway/app.ts';
import { openGatewayState } from '../../core/state/open-state.ts';
import { createDatabase, startPostgres, startRedis, teamServersInstalled } from '../../test/team/servers.ts';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const CALLS = arg('calls', 2000);
const CONCURRENCY = arg('concurrency', 32);
const MODEL = 'bench-model';
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }], max_tokens: 16 });

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

async function load(targets: string[], key: string): Promise<{ rps: number; p50: number; p99: number; cpuUsPerCall: number; errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
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
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < CALLS) {
      const i = next++;
      await one(targets[i % targets.length]);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return { rps: CALLS / seconds, p50: q(0.5), p99: q(0.99), cpuUsPerCall: (cpu.user + cpu.system) / CALLS, errors };
}

async function scenario(label: string, instances: number, team: { database: string; redis: string } | null, upstreamUrl: string) {
  const homes = Array.from({ length: instances }, () => mkdtempSync(path.join(tmpdir(), 'gw-bench-team-')));
  const { state } = await openGatewayState({ home: homes[0], team: team ?? undefined });
  process.env.BENCH_TEAM_UPSTREAM_KEY = 'sk-bench-0123456789';
  if (!(await state.providers.get('bench'))) {
    await state.providers.add({ name: 'bench', type: 'openai', preset: null, baseUrl: upstreamUrl, models: [MODEL], priority: 100, keyEnv: 'BENCH_TEAM_UPSTREAM_KEY', keySource: 'env', options: {} });
    await state.prices.set(MODEL, { inputPerMtok: 1, outputPerMtok: 2 });
  }
  const { secret } = await state.keys.create({ name: `bench-${Date.now()}`, budgetUsd: 1_000, budgetPeriod: 'total', rpm: 1_000_000 });
  await state.close();
  const gws: RunningGateway[] = [];
  for (const home of homes) gws.push(await startGateway({ home, port: 0, skipDiscovery: true, ...(team ?? {}), settings: { audit: { storeBodies: false, retentionDays: 90, maxRows: 1_000_000 } } }));
  try {
    await load(gws.map((g) => g.baseUrl), secret); // warm-up (JIT, pools, counters seeded)
    const r = await load(gws.map((g) => g.baseUrl), secret);
    return { label, ...r };
  } finally {
    for (const g of gws) await g.close();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!teamServersInstalled()) {
    console.error('bench/team: PostgreSQL and Redis are not installed (apt-get install -y postgresql redis-server); skipped.');
    return;
  }
  const upstream = await startUpstream();
  const [pgServer, redisServer] = await Promise.all([startPostgres(), startRedis()]);
  try {
    const team = { database: await createDatabase(pgServer.url, 'gateway_bench'), redis: redisServer.url };
    const rows = [
      await scenario('1 instance, SQLite', 1, null, upstream.url),
      await scenario('1 instance, PostgreSQL + Redis', 1, team, upstream.url),
      await scenario('3 instances, PostgreSQL + Redis', 3, team, upstream.url),
    ];
    console.log(`\n### Team mode (${CALLS} calls, concurrency ${CONCURRENCY}, key with budget + RPM; CPU = whole bench process per call)\n`);
    console.log('| setup | req/s | p50 ms | p99 ms | CPU µs/call | errors |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.label} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpuUsPerCall.toFixed(0)} | ${r.errors} |`);
  } finally {
    await upstream.close();
    await pgServer.stop();
    await redisServer.stop();
  }
}

await main();
