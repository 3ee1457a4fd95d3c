/** `gateway usage`: spend and tokens grouped by key, model, provider or day. */
import type { Command } from 'commander';
import { formatUsd, roundUsd, stringifyMoney } from '../../core/pricing/cost.ts';
import { usageError } from '../cli-error.ts';
import { note, out, table, withStore } from '../context.ts';

/** `YYYY-MM-DD` (local midnight), a full ISO time, or a relative `7d` / `24h`. */
export function parseSince(v: string): number {
  const rel = /^(\d+)([dhm])$/.exec(v);
  if (rel) return Date.now() - Number(rel[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[rel[2] as 'd' | 'h' | 'm'];
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (day) return new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])).getTime();
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw usageError(`--since "${v}" is not a date: use YYYY-MM-DD, an ISO time, or 7d / 24h`);
  return t;
}

export function registerUsage(program: Command): void {
  program
    .command('usage')
    .description('what was spent, grouped by key, model, provider or day')
    .option('--by <group>', 'key|model|provider|day', 'key')
    .option('--since <date>', 'YYYY-MM-DD, ISO time, or 7d/24h')
    .option('--json', 'print JSON')
    .action(async (opts: { by: string; since?: string; json?: boolean }) => {
      const by = opts.by;
      if (by !== 'key' && by !== 'model' && by !== 'provider' && by !== 'day') throw usageError('--by must be key, model, provider or day');
      const since = opts.since ? parseSince(opts.since) : undefined;
      await withStore(async (store) => {
        // Sums of rounded costs carry float noise: round them again, and print them as plain decimals.
        const rows = (await store.calls.usageSummary({ by, since })).map((r) => ({ ...r, cost_usd: roundUsd(r.cost_usd) }));
        if (opts.json) return out(stringifyMoney(rows, 2));
        if (rows.length === 0) return note('No calls recorded yet.');
        table(
          [by.toUpperCase(), 'REQUESTS', 'ERRORS', 'INPUT', 'OUTPUT', 'CACHED', 'REASONING', 'COST USD'],
          rows.map((r) => [r.group, r.requests, r.errors, r.input_tokens, r.output_tokens, r.cached_tokens, r.reasoning_tokens, `${formatUsd(r.cost_usd)}${r.unpriced ? ` (+${r.unpriced} unpriced)` : ''}`]),
        );
        const total = roundUsd(rows.reduce((s, r) => s + r.cost_usd, 0));
        note(`Total: $${formatUsd(total)} over ${rows.reduce((s, r) => s + r.requests, 0)} requests.`);
      });
    });
}
