/** The markdown the benchmark prints: the summary table against the lean floor, details, goals and checks. */
import { formatIdleSpell } from './idle-spell.ts';
import { formatWarmupCurve } from './warmup-curve.ts';
import { formatMemory } from './memory.ts';
import { formatProfile } from './profile.ts';
import { TARGET } from './results.ts';
import { formatThreadCpu } from './thread-cpu.ts';
import type { BenchResults, Verdict } from './results.ts';
import type { Footprint } from './server.ts';

const f0 = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : Math.round(n).toLocaleString('en-US'));
const f2 = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(2));
const ms = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const signed = (n: number | null | undefined): string => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : `${n >= 0 ? '+' : ''}${ms(n)}`);
const mib = (b: number | null | undefined): string => (b === null || b === undefined ? 'n/a' : `${(b / 1048576).toFixed(0)} MiB`);
const times = (a: number | null | undefined, b: number | null | undefined): string =>
  a === null || a === undefined || b === null || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`;

/** "155 MiB + 97 MiB (npm exec gateway start, sh -c gateway start)": the serving process first, then what else stays resident. */
export function formatFootprint(f: Footprint | null): string {
  if (!f) return 'n/a';
  const others = f.resident.filter((p) => p.pid !== f.mainPid);
  const rest = others.reduce((n, p) => n + (p.rss ?? 0), 0);
  return others.length === 0 ? mib(f.mainRss) : `${mib(f.mainRss)} + ${mib(rest)} (${others.map((p) => `\`${p.command}\``).join(', ')})`;
}

function summaryTable(r: BenchResults): string[] {
  const lean = r.targets.find((t) => t.name === TARGET.lean && !t.error);
  const out: string[] = [];
  out.push(
    `| target, concurrency ${String(r.config.concurrency)} | non-stream req/s | CPU µs per call | stream req/s | CPU µs per stream | idle memory | start to first 200 | CPU per call / lean | CPU per stream / lean | req/s / lean (non-stream, stream) | 100 KB prompt: CPU µs per call | / lean |`,
  );
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of r.targets) {
    if (t.skipped || t.error) {
      out.push(`| ${t.label} | ${t.skipped ? `skipped: ${t.skipped}` : `FAILED: ${(t.error ?? '').split('\n')[0]}`} | | | | | | | | | | |`);
      continue;
    }
    const direct = t.name === TARGET.direct;
    const isLean = t.name === TARGET.lean;
    const cpu = (v: number | null | undefined): string => (direct ? '—' : f0(v));
    const vsLean = (a: number | null | undefined, b: number | null | undefined): string => (direct || isLean ? '—' : times(a, b));
    out.push(
      [
        t.label,
        f0(t.nonStream?.rps),
        cpu(t.nonStream?.serverCpuUsPerReq),
        f0(t.stream?.rps),
        cpu(t.stream?.serverCpuUsPerReq),
        direct ? '—' : formatFootprint(t.idle),
        direct ? '—' : `${f0(t.startMs)} ms`,
        vsLean(t.nonStream?.serverCpuUsPerReq, lean?.nonStream?.serverCpuUsPerReq),
        vsLean(t.stream?.serverCpuUsPerReq, lean?.stream?.serverCpuUsPerReq),
        direct || isLean ? '—' : `${times(t.nonStream?.rps, lean?.nonStream?.rps)}, ${times(t.stream?.rps, lean?.stream?.rps)}`,
        t.bigPrompt ? cpu(t.bigPrompt.serverCpuUsPerReq) : '',
        t.bigPrompt ? vsLean(t.bigPrompt.serverCpuUsPerReq, lean?.bigPrompt?.serverCpuUsPerReq) : '',
      ]
        .join(' | ')
        .replace(/^/, '| ')
        .concat(' |'),
    );
  }
  return out;
}

const verdictLine = (v: Verdict): string => `- ${v.pass === null ? 'n/a ' : v.pass ? 'PASS' : 'FAIL'}: ${v.check} — ${v.detail}`;

export function formatReport(r: BenchResults): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`## gateway benchmark — ${r.startedAt}`);
  out.push('');
  out.push(
    `Machine: ${m.nproc} CPUs (${m.cpu}), ${m.memTotalMiB} MiB RAM, ${m.platform}, Node ${m.node}; load average at start ${m.loadavgAtStart.map((x) => x.toFixed(2)).join(' / ')} (1/5/15 min), at the end ${m.loadavgAtEnd.map((x) => x.toFixed(2)).join(' / ')}.`,
  );
  out.push(`Pinning: ${r.pinning.note}.`);
  out.push(
    `Gateway rows started with \`${r.gatewayCommand}\` in the checkout (CPU summed over its whole process tree; memory is the serving process's RSS, then what else stays resident).`,
  );
  if (m.loadavgAtStart[0] > m.nproc * 0.5) {
    out.push(
      `**Other work was running (1-min load ${m.loadavgAtStart[0].toFixed(1)} on ${m.nproc} CPUs): absolute numbers are depressed and noisy; the ratios within this run are the comparable figures.**`,
    );
  }
  const c = r.config;
  out.push(
    `Load: closed loop, concurrency ${String(c.concurrency)}; each server started by the bench first gets ${String(c.serverWarmupSeconds)} s of load (half non-stream, half stream) to settle, then ${String(c.warmupSeconds)} s warm-up + ${String(c.seconds)} s measured per run; ` +
      `~1 KB chat request; stream = ${String(c.streamChunks)} content chunks + finish + usage chunk + [DONE], ${String(c.chunkDelayMs)} ms between chunks. ` +
      `Peers: ${
        Object.entries(r.peers)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none'
      }. Total run ${r.durationSec.toFixed(0)} s.`,
  );
  out.push('');
  out.push('### Summary (ratios against the lean floor)');
  out.push('');
  out.push(...summaryTable(r));
  out.push('');
  out.push(
    "CPU µs per call = CPU time of the server's processes during the measured window / calls answered (from /proc). 100 KB prompt: non-stream calls whose last user message carries ~100 KB of source code.",
  );
  const rounds = r.targets.filter((t) => t.rounds !== null);
  if (rounds.length > 0) {
    const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' / ');
    out.push('');
    out.push(
      `Measured in ${String(r.config.rounds)} rounds, in turns; each row shows its median round. CPU µs per call by round: ${rounds
        .map((t) => `${t.name} ${list(t.rounds?.nonStream ?? [])} (non-stream), ${list(t.rounds?.stream ?? [])} (stream), ${list(t.rounds?.bigPrompt ?? [])} (100 KB)`)
        .join('; ')}.`,
    );
  }
  out.push('');
  out.push('### Goals (issue 13)');
  out.push('');
  for (const v of r.goals) out.push(verdictLine(v));
  out.push('');

  const direct = r.targets.find((t) => t.name === TARGET.direct && !t.error);
  out.push('### Non-streaming');
  out.push('');
  out.push('| target | req/s | p50 ms | p99 ms | added p50 | added p99 | server CPU µs/req | server CPU % | upstream conns | errors |');
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of r.targets) {
    const l = t.nonStream;
    if (!l) continue;
    const d = direct?.nonStream?.latency;
    const isDirect = t.name === TARGET.direct;
    out.push(
      `| ${t.label} | ${f0(l.rps)} | ${ms(l.latency.p50)} | ${ms(l.latency.p99)} | ${isDirect ? '—' : signed(d ? l.latency.p50 - d.p50 : null)} | ${isDirect ? '—' : signed(d ? l.latency.p99 - d.p99 : null)} | ${isDirect ? '—' : f0(l.serverCpuUsPerReq)} | ${isDirect ? '—' : f0(l.serverCpuPerSec === null ? null : l.serverCpuPerSec / 10)} | ${t.upstreamConnections?.nonStream ?? 'n/a'} | ${l.errors} |`,
    );
  }
  out.push('');
  out.push('### Streaming');
  out.push('');
  out.push('| target | streams/s | TTFT p50 ms | TTFT p99 ms | added TTFT p50 | total p50 ms | total p99 ms | added total p50 | server CPU µs/stream | upstream conns | errors |');
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of r.targets) {
    const l = t.stream;
    if (!l) continue;
    const d = direct?.stream;
    const isDirect = t.name === TARGET.direct;
    out.push(
      `| ${t.label} | ${f0(l.rps)} | ${ms(l.ttfb?.p50)} | ${ms(l.ttfb?.p99)} | ${isDirect ? '—' : signed(d?.ttfb && l.ttfb ? l.ttfb.p50 - d.ttfb.p50 : null)} | ${ms(l.latency.p50)} | ${ms(l.latency.p99)} | ${isDirect ? '—' : signed(d ? l.latency.p50 - d.latency.p50 : null)} | ${isDirect ? '—' : f0(l.serverCpuUsPerReq)} | ${t.upstreamConnections?.stream ?? 'n/a'} | ${l.errors} |`,
    );
  }
  out.push('');
  out.push(
    '"upstream conns" = TCP connections the fake upstream accepted during that run, warm-up included (the client holds one per worker: a proxy that reuses its upstream connections opens about as many).',
  );
  out.push('');
  out.push(
    ...formatThreadCpu(
      r.targets
        .filter((t) => t.name !== TARGET.direct)
        .map((t) => ({
          label: t.label,
          modes: [
            ['non-stream', t.nonStream?.serverThreadCpuUsPerReq],
            ['stream', t.stream?.serverThreadCpuUsPerReq],
            ['100 KB prompt', t.bigPrompt?.serverThreadCpuUsPerReq],
          ],
        })),
    ),
  );
  out.push('### Ratios');
  out.push('');
  out.push('| ratio | value |');
  out.push('|---|---:|');
  for (const [k, v] of Object.entries(r.ratios)) out.push(`| ${k} | ${v === null ? 'n/a' : `${f2(v)}×`} |`);
  out.push('');
  out.push('### Footprint');
  out.push('');
  out.push('| server | start ms (spawn → first 2xx) | idle RSS | processes resident when idle | max RSS under load | RSS after load |');
  out.push('|---|---:|---:|---|---:|---:|');
  for (const t of r.targets) {
    if (t.name === TARGET.direct || !t.idle) continue;
    const procs = t.idle.resident.map((p) => `${p.pid === t.idle?.mainPid ? '**' : ''}\`${p.command}\` ${mib(p.rss)}${p.pid === t.idle?.mainPid ? '**' : ''}`).join(', ');
    out.push(`| ${t.label} | ${f0(t.startMs)} | ${mib(t.idle.mainRss)} | ${procs} | ${mib(t.loadedRss)} | ${mib(t.rssAfterLoad)} |`);
  }
  out.push('');
  out.push('The serving process (the one listening on the port) in bold; RSS counts shared pages in each process, as `ps` does.');
  out.push('');
  const probed = r.targets.filter((t) => t.clientAbort);
  if (probed.length > 0) {
    out.push('### Clients leaving mid-request (one mid-upload, one mid-stream)');
    out.push('');
    for (const t of probed) {
      const a = t.clientAbort;
      if (a)
        out.push(
          `- ${t.label}: ${a.survived ? 'still healthy' : '**down or unhealthy afterwards**'}; ${a.upstreamCut ? 'the upstream stream was aborted' : 'the upstream stream was **not** aborted'} (${a.detail})`,
        );
    }
    out.push('');
  }
  for (const t of r.targets) {
    if (!t.audit) continue;
    const answered = [t.nonStream, t.stream, t.bigPrompt].reduce((n, l) => n + (l ? l.requests : 0), 0);
    out.push(
      `Audit check (${t.label}): ${t.audit.recorded} calls recorded for ${answered} requests of the median rounds (+ warm-ups and the other rounds); ` +
        `${t.audit.rows} rows still in the table${t.audit.rows < t.audit.recorded ? ' (retention took the oldest at the `audit.maxBytes` cap)' : ''}: ${t.audit.priced} priced, ${t.audit.withBodies} with bodies, total cost $${t.audit.costUsd.toFixed(4)}; ` +
        `${t.nonStream?.costed ?? 0}/${t.nonStream?.requests ?? 0} non-stream responses carried x-gateway-cost-usd.`,
    );
  }
  out.push('');
  for (const t of r.targets) if (t.note) out.push(`Note (${t.label}): ${t.note}`);
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
    out.push(
      "Latency split on `x-gateway-attempts` (1 = answered by the flaky provider, 2 = its 500 then the healthy one). At full concurrency the difference includes queueing behind the extra upstream call; at concurrency 1 it is the failover's own cost (one failed round trip, its error parsing, the retry).",
    );
    out.push(
      'The circuit breaker is set to open only after 1,000,000 consecutive failures here, so every other request keeps failing over (the default, 3, would take the flaky provider out for 30 s as soon as three failures land in a row).',
    );
    out.push('');
  }

  if (r.memory) {
    out.push(formatMemory(r.memory));
    out.push('');
  }
  if (r.idleSpell) {
    out.push(formatIdleSpell(r.idleSpell));
    out.push('');
  }
  if (r.warmupCurve) {
    out.push(formatWarmupCurve(r.warmupCurve));
    out.push('');
  }
  for (const s of r.sections) {
    out.push(s);
    out.push('');
  }
  out.push('### Correctness');
  out.push('');
  for (const v of r.verdicts) out.push(verdictLine(v));

  if (r.warnings.length > 0) {
    out.push('');
    out.push('### Warnings');
    out.push('');
    for (const w of r.warnings) out.push(`- ${w}`);
  }
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
