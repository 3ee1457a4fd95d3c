/** `gateway cassettes list|show|prune DIR`: what a record/replay cassette holds, and trimming it. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { chunkBytes } from '../../core/cassettes/format.ts';
import { findEntry, inventory, prune, readEntry } from '../../core/cassettes/inventory.ts';
import type { CassetteEntry } from '../../core/cassettes/inventory.ts';
import { formatUsd } from '../../core/pricing/cost.ts';
import { CliError, usageError } from '../cli-error.ts';
import { note, out, printJson, table } from '../context.ts';

function cassetteDir(dir: string): string {
  const full = path.resolve(dir);
  if (!existsSync(full)) throw new CliError(`No cassette directory at ${full}; record one with \`gateway start --record ${dir}\`.`);
  return full;
}

const cost = (e: CassetteEntry): string => (e.recorded_cost_usd === null ? '-' : `$${formatUsd(e.recorded_cost_usd)}`);
const used = (e: CassetteEntry): string => (e.used_in_last_run === null ? '-' : e.used_in_last_run ? 'yes' : 'no');

export function registerCassettes(program: Command): void {
  const cassettes = program.command('cassettes').description('inspect and prune record/replay cassettes');

  cassettes
    .command('list <dir>')
    .description('one line per recorded request: endpoint, model, answers, when, cost, used by the last replay run')
    .option('--json', 'print JSON')
    .action((dir: string, opts: { json?: boolean }) => {
      const inv = inventory(cassetteDir(dir));
      if (opts.json) return printJson(inv);
      if (inv.entries.length === 0) note(`${inv.dir} holds no recorded request yet.`);
      else {
        table(
          ['FILE', 'ENDPOINT', 'MODEL', 'ANSWERS', 'STATUS', 'RECORDED', 'COST', 'USED'],
          inv.entries.map((e) => [e.file, e.endpoint, e.model, e.answers, [...new Set(e.statuses)].join(','), e.last_recorded_at, cost(e), used(e)]),
        );
      }
      for (const u of inv.unreadable) note(`unreadable: ${u.file}: ${u.error}`);
      note(inv.last_run_started_at ? `Last replay run started ${inv.last_run_started_at}.` : 'No replay run recorded yet (USED is filled in by --replay).');
    });

  cassettes
    .command('show <dir> [entry]')
    .description('the request and the answers of one entry (file name or digest prefix), or of every entry')
    .option('--json', 'print JSON')
    .action((dir: string, entry: string | undefined, opts: { json?: boolean }) => {
      const inv = inventory(cassetteDir(dir));
      const chosen = entry === undefined ? inv.entries : [wrap(() => findEntry(inv, entry))];
      const files = chosen.map((e) => ({ entry: e, cassette: readEntry(inv.dir, e.file) }));
      if (opts.json) return printJson(files.map((f) => ({ ...f.entry, request: f.cassette.request, interactions: f.cassette.interactions })));
      for (const { entry: e, cassette } of files) {
        out(`${e.file}`);
        out(`  POST ${e.endpoint}  model ${e.model ?? '-'}  ${e.digest}`);
        out(`  request: ${JSON.stringify(cassette.request)}`);
        cassette.interactions.forEach((i, n) => {
          const body =
            i.chunks !== undefined
              ? `${i.chunks.length} stream chunks, ${Buffer.concat(i.chunks.map(chunkBytes)).length} bytes`
              : i.json !== undefined
                ? JSON.stringify(i.json)
                : (i.text ?? `<${i.base64?.length ?? 0} base64 characters>`);
          out(`  #${n + 1} ${i.status} ${i.recorded_at}${i.cost_usd === null ? '' : ` $${formatUsd(i.cost_usd)}`}: ${body.length > 300 ? `${body.slice(0, 300)}…` : body}`);
        });
        out();
      }
    });

  cassettes
    .command('prune <dir>')
    .description('remove entries the last replay run did not use (--unused) and/or recorded over DAYS ago (--older-than)')
    .option('--unused', 'entries the last replay run did not use')
    .option('--older-than <days>', 'entries whose newest answer is older than this many days')
    .option('--dry-run', 'list what would be removed, remove nothing')
    .option('--json', 'print JSON')
    .action((dir: string, opts: { unused?: boolean; olderThan?: string; dryRun?: boolean; json?: boolean }) => {
      const days = opts.olderThan === undefined ? undefined : Number(opts.olderThan);
      if (days !== undefined && !(Number.isFinite(days) && days >= 0)) throw usageError(`--older-than takes a number of days, got "${opts.olderThan}"`);
      if (!opts.unused && days === undefined) throw usageError('say what to prune: --unused, --older-than DAYS, or both');
      const removed = wrap(() => prune(cassetteDir(dir), { unused: opts.unused, olderThanDays: days, dryRun: opts.dryRun }));
      if (opts.json) return printJson({ dry_run: opts.dryRun === true, removed });
      for (const e of removed) out(e.file);
      note(`${opts.dryRun ? 'Would remove' : 'Removed'} ${removed.length} entr${removed.length === 1 ? 'y' : 'ies'}.`);
    });
}

function wrap<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError((err as Error).message);
  }
}
