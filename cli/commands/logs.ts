/** `gateway logs`: the audit trail, newest first; `--follow` tails it; `show ID` has the whole call. */
import type { Command } from 'commander';
import { callDetailJson, callJsonAt } from '../../core/call-json.ts';
import type { CallJson } from '../../core/call-json.ts';
import type { CallRow } from '../../core/storage/call-row.ts';
import { parseStatusFilter } from '../../core/storage/log-search.ts';
import type { LogSearch } from '../../core/storage/log-search.ts';
import { formatUsd } from '../../core/pricing/cost.ts';
import { CliError, usageError } from '../cli-error.ts';
import { note, out, printJson, withStore } from '../context.ts';

const pad = (n: number) => String(n).padStart(2, '0');

let lastSecond = Number.NaN;
let lastText = '';

/**
 * `2026-11-24 10:24:53` in the machine's local time: what a user compares with their clock. The text of the
 * last second is kept: `gateway start` prints a line per call, many in the same second.
 */
export function localTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : localTimeOf(t);
}

/** `localTime` of a time in unix ms. */
function localTimeOf(t: number): string {
  const second = Math.floor(t / 1000);
  if (second !== lastSecond) {
    const d = new Date(t);
    lastText = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    lastSecond = second;
  }
  return lastText;
}

/** What a call's line shows, in `CallJson`'s names (the time apart). */
type LineCall = Pick<
  CallJson,
  'id' | 'key' | 'model_requested' | 'model' | 'provider' | 'status' | 'error_type' | 'error_message' | 'stream' | 'input_tokens' | 'output_tokens' | 'cost_usd' | 'pricing' | 'latency_ms' | 'attempts' | 'replayed'
>;

/** A call's cost in words: refused calls cost nothing (`-`), unpriced ones say so, estimates end in `~`. */
function costWords(c: LineCall): string {
  if (c.cost_usd === null) return c.provider === null || c.status >= 400 ? '-' : 'unpriced';
  return `$${formatUsd(c.cost_usd)}${c.pricing === 'estimated' ? '~' : ''}`;
}

const ARROW = ' → ';

/** The line's pieces: its `→` apart when it has one, so that the text on either side stays Latin-1 (see LineWriter). */
function callLinePieces(time: string, c: LineCall): [string] | [string, string, string] {
  const head = `${time} ${c.status} ${c.key ?? '-'} ${c.model_requested ?? '-'}`;
  const err = c.status >= 400 ? ` ${c.error_type ?? ''}: ${c.error_message ?? ''}` : '';
  const rest = `${c.stream ? ' [stream]' : ''} in=${c.input_tokens} out=${c.output_tokens} ${costWords(c)}${c.replayed ? ' (replayed)' : ''} ${c.latency_ms}ms x${c.attempts} ${c.id}${err}`;
  return c.provider ? [head, ARROW, `${c.provider}/${c.model}${rest}`] : [`${head}${rest}`];
}

function callLine(time: string, c: LineCall): string {
  return callLinePieces(time, c).join('');
}

export function formatCallLine(c: CallJson): string {
  return callLine(localTime(c.time), c);
}

/**
 * The same line from the audit row, as `gateway start` prints it for every call: the row's time is read as
 * it is, not written as ISO text and parsed back (that round trip was ~1 µs a call).
 */
export function formatRowLine(row: CallRow): string {
  return rowLinePieces(row).join('');
}

/** `formatRowLine`'s line in pieces, for a `LineWriter`. */
export function rowLinePieces(row: CallRow): readonly string[] {
  const time = localTimeOf(row.time);
  return callLinePieces(time, callJsonAt(row, time));
}

/**
 * `--since`: a duration back from now (`30m`, `2h`, `7d`), a local date (`2026-11-01`, from its
 * midnight), or any date-time JavaScript reads (`2026-11-01T09:00`, local unless it names a zone).
 */
export function parseSince(raw: string, now = Date.now()): number {
  const rel = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/i.exec(raw.trim());
  if (rel) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2].toLowerCase() as 's' | 'm' | 'h' | 'd' | 'w'];
    return now - Number(rel[1]) * unit;
  }
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw.trim());
  if (day) return new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])).getTime();
  const t = Date.parse(raw);
  if (!Number.isFinite(t)) throw usageError(`--since ${raw}: use a duration (30m, 2h, 7d), a date (2026-11-01) or a date-time`);
  return t;
}

interface LogFilterOptions {
  key?: string;
  model?: string;
  status?: string;
  since?: string;
}

function searchOf(opts: LogFilterOptions, limit: number): LogSearch {
  const s: LogSearch = { limit };
  if (opts.key) s.key = opts.key;
  if (opts.model) s.model = opts.model;
  if (opts.status) {
    const st = parseStatusFilter(opts.status);
    if (st === null) throw usageError(`--status ${opts.status}: use a code (429), a class (4xx, 5xx), ok or error`);
    s.status = st;
  }
  if (opts.since) s.since = parseSince(opts.since);
  return s;
}

export function registerLogs(program: Command): void {
  const logs = program
    .command('logs')
    .description('recent calls, newest first')
    .option('--json', 'one JSON object per line')
    .option('--follow', 'keep printing new calls')
    .option('--limit <n>', 'how many calls', '50')
    .option('--key <name>', 'only calls made with this key')
    .option('--model <model>', 'only calls for this model (requested or resolved)')
    .option('--status <s>', 'only this status: a code (429), a class (4xx, 5xx), ok or error')
    .option('--since <when>', 'only calls since: 30m, 2h, 7d, a date (2026-11-01) or a date-time')
    .action(async (opts: LogFilterOptions & { json?: boolean; follow?: boolean; limit: string }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit <= 0) throw usageError('--limit must be a positive integer');
      const search = searchOf(opts, limit);
      const print = (c: CallJson) => out(opts.json ? JSON.stringify(c) : formatCallLine(c));
      await withStore(async (store) => {
        const first = await store.calls.searchCalls(search);
        for (const c of first) print(c);
        if (!opts.follow) return;
        // Following prints oldest-to-newest as calls arrive; the server flushes at least every 200 ms.
        const seen = new Set(first.map((c) => c.id));
        let since = first.length > 0 ? Date.parse(first[0].time) : Date.now() - 1000;
        await new Promise<void>((resolve) => {
          const timer = setInterval(async () => {
            const fresh = (await store.calls.searchCalls({ ...search, limit: 1000, since: Math.max(search.since ?? 0, since) })).reverse();
            for (const c of fresh) {
              if (seen.has(c.id)) continue;
              seen.add(c.id);
              since = Math.max(since, Date.parse(c.time));
              print(c);
            }
          }, 300);
          const stop = () => {
            clearInterval(timer);
            resolve();
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      });
    });

  logs
    .command('show <id>')
    .description('one call in full: attempts, bodies')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
      // `logs` has its own --json, and commander gives a flag the parent knows to the parent wherever it appears.
      const json = opts.json === true || cmd.parent?.opts<{ json?: boolean }>().json === true;
      await withStore(async (store) => {
        const call = await store.calls.getCall(id);
        if (!call) throw new CliError(`No call with id ${id}; ids (req_...) are the x-request-id header of a response and the last field of each \`gateway logs\` line.`);
        const d = callDetailJson(call);
        if (json) return printJson(d);
        out(formatCallLine(d));
        for (const a of d.attempt_list) out(`  attempt ${a.provider}/${a.model}: ${a.status ?? 'no response'} ${a.error ?? 'ok'} (${a.duration_ms} ms)`);
        if (d.request_body) out(`request:  ${d.request_body}`);
        if (d.response_body) out(`response: ${d.response_body}`);
      });
    });

  logs
    .command('purge')
    .description('delete old calls from the audit log')
    .option('--older-than <days>', 'delete calls older than this many days')
    .option('--all', 'delete every call')
    .action(async (opts: { olderThan?: string; all?: boolean }) => {
      if (!opts.all && opts.olderThan === undefined) throw usageError('say what to purge: --older-than DAYS or --all');
      const days = opts.olderThan !== undefined ? Number(opts.olderThan) : 0;
      if (!opts.all && (!Number.isFinite(days) || days < 0)) throw usageError('--older-than must be a number of days');
      await withStore(async (store) => {
        const n = await store.calls.purgeCalls(opts.all ? { beforeTime: Date.now() + 1 } : { olderThanMs: days * 86_400_000 });
        note(`Purged ${n} calls.`);
      });
    });
}
