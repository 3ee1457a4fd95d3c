/**
 * What a cassette directory holds, for `gateway cassettes list|show|prune`: one entry per file, with
 * its request, its answers and whether the last replay run used it; and pruning by use or by age.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { answerFacts } from './answer-facts.ts';
import { parseCassette } from './format.ts';
import type { CassetteFile } from './format.ts';
import { listCassetteFiles, readLastRun } from './store.ts';

/** Snake case on purpose: this is also what `--json` prints. */
export interface CassetteEntry {
  file: string;
  endpoint: string;
  model: string | null;
  digest: string;
  answers: number;
  statuses: number[];
  stream: boolean;
  first_recorded_at: string | null;
  last_recorded_at: string | null;
  /** What the recorded answers cost together when they were recorded (USD), when known. */
  recorded_cost_usd: number | null;
  /** Whether the last replay run used it; null when no replay run has been recorded in the directory. */
  used_in_last_run: boolean | null;
}

interface Inventory {
  dir: string;
  last_run_started_at: string | null;
  entries: CassetteEntry[];
  /** Files that are not cassettes (they are listed, never pruned). */
  unreadable: Array<{ file: string; error: string }>;
}

export function readEntry(dir: string, file: string): CassetteFile {
  const full = path.join(dir, file);
  return parseCassette(readFileSync(full, 'utf8'), full);
}

export function inventory(dir: string): Inventory {
  const lastRun = readLastRun(dir);
  const used = new Set(lastRun?.used ?? []);
  const entries: CassetteEntry[] = [];
  const unreadable: Inventory['unreadable'] = [];
  for (const file of listCassetteFiles(dir)) {
    let c: CassetteFile;
    try {
      c = readEntry(dir, file);
    } catch (err) {
      unreadable.push({ file, error: (err as Error).message });
      continue;
    }
    const times = c.interactions.map((i) => i.recorded_at).sort();
    const costs = c.interactions.map((i) => i.cost_usd ?? answerFacts(i).costUsd);
    entries.push({
      file,
      endpoint: c.endpoint,
      model: c.model,
      digest: c.digest,
      answers: c.interactions.length,
      statuses: c.interactions.map((i) => i.status),
      stream: c.interactions.some((i) => i.chunks !== undefined),
      first_recorded_at: times[0] ?? null,
      last_recorded_at: times.at(-1) ?? null,
      recorded_cost_usd: costs.every((x) => x === null) ? null : costs.reduce<number>((a, b) => a + (b ?? 0), 0),
      used_in_last_run: lastRun ? used.has(file) : null,
    });
  }
  return { dir, last_run_started_at: lastRun?.started_at ?? null, entries, unreadable };
}

/** An entry by file name, digest (with or without `sha256:`) or a unique prefix of either. */
export function findEntry(inv: Inventory, ref: string): CassetteEntry {
  const r = ref.replace(/^sha256:/, '');
  const matches = inv.entries.filter((e) => e.file === ref || e.file.startsWith(ref) || e.digest.replace(/^sha256:/, '').startsWith(r));
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) throw new Error(`no entry "${ref}" in ${inv.dir} (\`gateway cassettes list ${inv.dir}\` lists them)`);
  throw new Error(`"${ref}" matches ${matches.length} entries in ${inv.dir}; give more of the file name or digest`);
}

interface PruneOptions {
  /** Entries the last replay run did not use. */
  unused?: boolean;
  /** Entries whose newest answer is older than this many days. */
  olderThanDays?: number;
  dryRun?: boolean;
  now?: number;
}

/** Removes the entries matching every given criterion; returns them. */
export function prune(dir: string, opts: PruneOptions): CassetteEntry[] {
  if (!opts.unused && opts.olderThanDays === undefined) throw new Error('say what to prune: --unused, --older-than DAYS, or both');
  const inv = inventory(dir);
  if (opts.unused && inv.last_run_started_at === null) {
    throw new Error(`no replay run is recorded in ${dir} (.last-run.json): run your tests with --replay first, or prune with --older-than`);
  }
  const cutoff = opts.olderThanDays === undefined ? null : (opts.now ?? Date.now()) - opts.olderThanDays * 86_400_000;
  const doomed = inv.entries.filter(
    (e) => (!opts.unused || e.used_in_last_run === false) && (cutoff === null || (e.last_recorded_at !== null && Date.parse(e.last_recorded_at) < cutoff)),
  );
  if (!opts.dryRun) for (const e of doomed) rmSync(path.join(dir, e.file), { force: true });
  return doomed;
}
