/** The benchmark's results: their shape (also written as JSON) and the markdown tables printed. */
import type { AuditSummary } from './gateway.ts';
import type { LoadResult, Stats } from './load.ts';
import type { ProfileSummary } from './profile.ts';
import { formatProfile } from './profile.ts';

export type TargetName = 'direct' | 'bare' | 'gateway' | 'portkey' | 'messages' | 'gateway-responses';

export const TARGET_LABELS: Record<TargetName, string> = {
  direct: 'direct (client → upstream)',
  bare: 'bare undici proxy',
  gateway: 'gateway (ours)',
  portkey: 'Portkey gateway',
  messages: 'gateway /v1/messages → Anthropic (pass-through)',
  'gateway-responses': 'gateway /v1/responses → chat (bridged)',
};

export interface UpstreamStats {
  chat: number;
  stream: number;
  flakyOk: number;
  flakyFailed: number;
  other: number;
  connections: number;
}

export interface TargetResult {
  name: TargetName;
  error: string | null;
  nonStream: LoadResult | null;
  stream: LoadResult | null;
  startMs: number | null;
  idleRss: number | null;
  loadedRss: number | null;
  rssAfterLoad: number | null;
  /** Requests the fake upstream saw during this target's runs (warm-ups included). */
  upstreamDelta: UpstreamStats | null;
  /** TCP connections the fake upstream accepted during each mode (warm-up included): keep-alive reuse. */
  upstreamConnections: { nonStream: number; stream: number } | null;
  audit: AuditSummary | null;
  note: string | null;
}

export interface FailoverResult {
  mode: 'non-stream' | 'stream';
  concurrency: number;
  error: string | null;
  load: LoadResult | null;
  upstreamDelta: UpstreamStats | null;
  /** Requests answered on the first attempt vs after failing over (x-gateway-attempts). */
  normal: Stats | null;
  failedOver: Stats | null;
  addedP50: number | null;
  addedP99: number | null;
}

export interface BenchResults {
  startedAt: string;
  durationSec: number;
  machine: { nproc: number; loadavgAtStart: number[]; loadavgAtEnd: number[]; node: string; cpu: string; platform: string; memTotalMiB: number };
  config: Record<string, unknown>;
  pinning: { available: boolean; note: string };
  portkeyVersion: string | null;
  targets: TargetResult[];
  ratios: Record<string, number | null>;
  failover: FailoverResult[];
  verdicts: Array<{ check: string; pass: boolean; detail: string }>;
  problems: string[];
  profiles: Array<{ mode: 'non-stream' | 'stream'; rps: number; cpuUsPerReq: number | null; summary: ProfileSummary }>;
}

const f0 = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(0));
const f2 = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(2));
const ms = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const signed = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : `${n >= 0 ? '+' : ''}${ms(n)}`);
const mib = (b: number | null | undefined): string => (b === null || b === undefined ? 'n/a' : (b / 1048576).toFixed(1));
const ratio = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a === null || a === undefined || b === null || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? null : a / b;

export function computeRatios(targets: TargetResult[]): Record<string, number | null> {
  const t = (n: TargetName): TargetResult | undefined => targets.find((x) => x.name === n && !x.error);
  const rps = (n: TargetName, s: boolean): number | null => (s ? t(n)?.stream?.rps : t(n)?.nonStream?.rps) ?? null;
  const cpu = (n: TargetName, s: boolean): number | null => (s ? t(n)?.stream?.serverCpuUsPerReq : t(n)?.nonStream?.serverCpuUsPerReq) ?? null;
  const p50 = (n: TargetName): number | null => t(n)?.nonStream?.latency.p50 ?? null;
  const added = (n: TargetName): number | null => {
    const a = p50(n);
    const d = p50('direct');
    return a === null || d === null ? null : a - d;
  };
  return {
    'gateway/bare throughput (non-stream)': ratio(rps('gateway', false), rps('bare', false)),
    'gateway/bare throughput (stream)': ratio(rps('gateway', true), rps('bare', true)),
    'gateway/direct throughput (non-stream)': ratio(rps('gateway', false), rps('direct', false)),
    'gateway/direct throughput (stream)': ratio(rps('gateway', true), rps('direct', true)),
    'portkey/bare throughput (non-stream)': ratio(rps('portkey', false), rps('bare', false)),
    'portkey/bare throughput (stream)': ratio(rps('portkey', true), rps('bare', true)),
    'gateway/portkey throughput (non-stream)': ratio(rps('gateway', false), rps('portkey', false)),
    'gateway/portkey throughput (stream)': ratio(rps('gateway', true), rps('portkey', true)),
    'gateway/bare server CPU per request (non-stream)': ratio(cpu('gateway', false), cpu('bare', false)),
    'gateway/bare server CPU per request (stream)': ratio(cpu('gateway', true), cpu('bare', true)),
    'portkey/bare server CPU per request (non-stream)': ratio(cpu('portkey', false), cpu('bare', false)),
    'gateway/bare added p50 latency (non-stream)': ratio(added('gateway'), added('bare')),
  };
}

export function formatReport(r: BenchResults): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`## gateway benchmark — ${r.startedAt}`);
  out.push('');
  out.push(
    `Machine: ${m.nproc} CPUs (${m.cpu}), ${m.memTotalMiB} MiB RAM, ${m.platform}, Node ${m.node}; load average at start ${m.loadavgAtStart.map((x) => x.toFixed(2)).join(' / ')} (1/5/15 min), at the end ${m.loadavgAtEnd.map((x) => x.toFixed(2)).join(' / ')}.`,
  );
  out.push(`Pinning: ${r.pinning.note}.`);
  if (m.loadavgAtStart[0] > m.nproc * 0.5) {
    out.push(`**Other work was running (1-min load ${m.loadavgAtStart[0].toFixed(1)} on ${m.nproc} CPUs): absolute numbers are depressed and noisy; the ratios within this run are the comparable figures.**`);
  }
  const c = r.config;
  out.push(
    `Load: closed loop, concurrency ${String(c.concurrency)}, ${String(c.warmupSeconds)} s warm-up + ${String(c.seconds)} s measured per run; ` +
      `~1 KB chat request; stream = ${String(c.streamChunks)} content chunks + finish + usage chunk + [DONE], ${String(c.chunkDelayMs)} ms between chunks. ` +
      `Portkey ${r.portkeyVersion ?? 'n/a'}. Total run ${r.durationSec.toFixed(0)} s.`,
  );
  out.push('');

  const direct = r.targets.find((t) => t.name === 'direct' && !t.error);
  out.push('### Non-streaming');
  out.push('');
  out.push('| target | req/s | p50 ms | p99 ms | added p50 | added p99 | server CPU µs/req | server CPU % | upstream conns | errors |');
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of r.targets) {
    const l = t.nonStream;
    if (!l) {
      out.push(`| ${TARGET_LABELS[t.name]} | ${t.error ? `FAILED: ${t.error.split('\n')[0]}` : 'n/a'} | | | | | | | | |`);
      continue;
    }
    const d = direct?.nonStream?.latency;
    const isDirect = t.name === 'direct';
    out.push(
      `| ${TARGET_LABELS[t.name]} | ${f0(l.rps)} | ${ms(l.latency.p50)} | ${ms(l.latency.p99)} | ${isDirect ? '—' : signed(d ? l.latency.p50 - d.p50 : null)} | ${isDirect ? '—' : signed(d ? l.latency.p99 - d.p99 : null)} | ${isDirect ? '—' : f0(l.serverCpuUsPerReq)} | ${isDirect ? '—' : f0(l.serverCpuPerSec === null ? null : l.serverCpuPerSec / 10)} | ${t.upstreamConnections?.nonStream ?? 'n/a'} | ${l.errors} |`,
    );
  }
  out.push('');
  out.push('### Streaming');
  out.push('');
  out.push('| target | streams/s | TTFT p50 ms | TTFT p99 ms | added TTFT p50 | total p50 ms | total p99 ms | added total p50 | server CPU µs/stream | upstream conns | errors |');
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of r.targets) {
    const l = t.stream;
    if (!l) {
      out.push(`| ${TARGET_LABELS[t.name]} | ${t.error ? 'FAILED' : 'n/a'} | | | | | | | | | |`);
      continue;
    }
    const d = direct?.stream;
    const isDirect = t.name === 'direct';
    out.push(
      `| ${TARGET_LABELS[t.name]} | ${f0(l.rps)} | ${ms(l.ttfb?.p50)} | ${ms(l.ttfb?.p99)} | ${isDirect ? '—' : signed(d?.ttfb && l.ttfb ? l.ttfb.p50 - d.ttfb.p50 : null)} | ${ms(l.latency.p50)} | ${ms(l.latency.p99)} | ${isDirect ? '—' : signed(d ? l.latency.p50 - d.latency.p50 : null)} | ${isDirect ? '—' : f0(l.serverCpuUsPerReq)} | ${t.upstreamConnections?.stream ?? 'n/a'} | ${l.errors} |`,
    );
  }
  out.push('');
  out.push('"upstream conns" = TCP connections the fake upstream accepted during that run, warm-up included (the client holds one per worker: a proxy that reuses its upstream connections opens about as many).');
  out.push('');
  out.push('### Ratios');
  out.push('');
  out.push('| ratio | value |');
  out.push('|---|---:|');
  for (const [k, v] of Object.entries(r.ratios)) out.push(`| ${k} | ${v === null ? 'n/a' : `${f2(v)}×`} |`);
  out.push('');
  out.push('### Footprint');
  out.push('');
  out.push('| server | start ms (spawn → first 2xx health) | idle RSS MiB | max RSS under load MiB | RSS after load MiB |');
  out.push('|---|---:|---:|---:|---:|');
  for (const t of r.targets) {
    if (t.name === 'direct') continue;
    out.push(`| ${TARGET_LABELS[t.name]} | ${f0(t.startMs)} | ${mib(t.idleRss)} | ${mib(t.loadedRss)} | ${mib(t.rssAfterLoad)} |`);
  }
  out.push('');
  const gw = r.targets.find((t) => t.name === 'gateway');
  if (gw?.audit) {
    out.push(
      `Gateway audit check: ${gw.audit.rows} rows written for ${(gw.nonStream?.requests ?? 0) + (gw.stream?.requests ?? 0)} measured requests (+ warm-ups); ${gw.audit.priced} priced, ${gw.audit.withBodies} with bodies, total cost $${gw.audit.costUsd.toFixed(4)}; ` +
        `${gw.nonStream?.costed ?? 0}/${gw.nonStream?.requests ?? 0} non-stream responses carried x-gateway-cost-usd.`,
    );
    out.push('');
  }
  for (const t of r.targets) if (t.note) out.push(`Note (${TARGET_LABELS[t.name]}): ${t.note}`);
  out.push('');

  if (r.failover.length > 0) {
    out.push('### Failover: two providers, the first (priority 1) failing every other request with a 500');
    out.push('');
    out.push('| mode | concurrency | req/s | client errors | first-attempt n | p50 ms | p99 ms | failed-over n | p50 ms | p99 ms | added by failover p50 / p99 | upstream 500s |');
    out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const f of r.failover) {
      if (!f.load) {
        out.push(`| ${f.mode} | ${f.concurrency} | FAILED: ${(f.error ?? '').split('\n')[0]} | | | | | | | | | |`);
        continue;
      }
      out.push(
        `| ${f.mode}${f.mode === 'stream' ? ' (total)' : ''} | ${f.concurrency} | ${f0(f.load.rps)} | ${f.load.errors} | ${f.normal?.count ?? 0} | ${ms(f.normal?.p50)} | ${ms(f.normal?.p99)} | ${f.failedOver?.count ?? 0} | ${ms(f.failedOver?.p50)} | ${ms(f.failedOver?.p99)} | ${signed(f.addedP50)} / ${signed(f.addedP99)} | ${f.upstreamDelta?.flakyFailed ?? 'n/a'} |`,
      );
    }
    out.push('');
    out.push('Latency split on `x-gateway-attempts` (1 = answered by the flaky provider, 2 = its 500 then the healthy one). At full concurrency the difference includes queueing behind the extra upstream call; at concurrency 1 it is the failover\'s own cost (one failed round trip, its error parsing, the retry).');
    out.push('The circuit breaker is set to open only after 1,000,000 consecutive failures here, so every other request keeps failing over (the default, 3, would take the flaky provider out for 30 s as soon as three failures land in a row).');
    out.push('');
  }

  out.push('### Checks');
  out.push('');
  for (const v of r.verdicts) out.push(`- ${v.pass ? 'PASS' : 'FAIL'}: ${v.check} — ${v.detail}`);
  if (r.problems.length > 0) {
    out.push('');
    out.push('### Problems');
    out.push('');
    for (const p of r.problems) out.push(`- ${p.replace(/\n/g, '\n  ')}`);
  }
  for (const p of r.profiles) {
    out.push('');
    out.push(`### CPU profile of the gateway (${p.mode} load: ${f0(p.rps)} req/s, ${f0(p.cpuUsPerReq)} µs CPU per request while profiled)`);
    out.push('');
    out.push(formatProfile(p.summary));
  }
  return out.join('\n');
}

