/** `gateway logs`: the audit trail, newest first; `--follow` tails it; `show ID` has the whole call. */
import type { Command } from 'commander';
import { callDetailJson, callToJson } from '../../core/call-json.ts';
import type { CallJson } from '../../core/call-json.ts';
import { getCall, listCalls, purgeCalls } from '../../core/storage/audit-queries.ts';
import { formatUsd } from '../../core/pricing/cost.ts';
import { CliError, usageError } from '../cli-error.ts';
import { note, out, printJson, withStore } from '../context.ts';

export function formatCallLine(c: CallJson): string {
  const cost = c.cost_usd === null ? 'unpriced' : `$${formatUsd(c.cost_usd)}${c.pricing === 'estimated' ? '~' : ''}`;
  const err = c.status >= 400 ? ` ${c.error_type ?? ''}: ${c.error_message ?? ''}` : '';
  return `${c.time} ${c.status} ${c.key ?? '-'} ${c.model_requested ?? '-'}${c.provider ? ` → ${c.provider}/${c.model}` : ''} in=${c.input_tokens} out=${c.output_tokens} ${cost}${c.replayed ? ' (replayed)' : ''} ${c.latency_ms}ms x${c.attempts} ${c.id}${err}`;
}

export function registerLogs(program: Command): void {
  const logs = program
    .command('logs')
    .description('recent calls, newest first')
    .option('--json', 'one JSON object per line')
    .option('--follow', 'keep printing new calls')
    .option('--limit <n>', 'how many calls', '50')
    .action(async (opts: { json?: boolean; follow?: boolean; limit: string }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit <= 0) throw usageError('--limit must be a positive integer');
      const print = (c: CallJson) => out(opts.json ? JSON.stringify(c) : formatCallLine(c));
      await withStore(async (store) => {
        const first = listCalls(store.db, { limit });
        for (const c of first) print(callToJson(c));
        if (!opts.follow) return;
        // Following prints oldest-to-newest as calls arrive; the server flushes at least every 200 ms.
        const seen = new Set(first.map((c) => c.id));
        let since = first.length > 0 ? first[0].time : Date.now() - 1000;
        await new Promise<void>((resolve) => {
          const timer = setInterval(() => {
            const fresh = listCalls(store.db, { limit: 1000, sinceTime: since }).reverse();
            for (const c of fresh) {
              if (seen.has(c.id)) continue;
              seen.add(c.id);
              since = Math.max(since, c.time);
              print(callToJson(c));
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
      await withStore((store) => {
        const call = getCall(store.db, id);
        if (!call) throw new CliError(`No call with id ${id}; ids are the x-request-id header and the first column of \`gateway logs\`.`);
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
      await withStore((store) => {
        const n = purgeCalls(store.db, opts.all ? { beforeTime: Date.now() + 1 } : { olderThanMs: days * 86_400_000 });
        note(`Purged ${n} calls.`);
      });
    });
}
