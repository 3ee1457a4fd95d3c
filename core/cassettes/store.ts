/**
 * A cassette directory: reads and writes its files, hands out recorded answers in recording order, and
 * notes which files the current replay run used (`.last-run.json`, what `gateway cassettes prune
 * --unused` reads). One store per directory per gateway process; files are read once and kept.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { differingFields } from './canonical.ts';
import type { CanonicalRequest } from './canonical.ts';
import { cassetteFileName, newCassetteFile, parseCassette, serializeCassette } from './format.ts';
import type { CassetteFile, Interaction } from './format.ts';

const LAST_RUN_FILE = '.last-run.json';

export interface LastRun {
  started_at: string;
  used: string[];
}

export interface Candidate {
  file: string;
  differs: string[];
}

export class CassetteStore {
  readonly dir: string;
  private readonly files = new Map<string, CassetteFile>();
  /** Next answer to hand out, per file. */
  private readonly cursors = new Map<string, number>();
  /** Files this process has (re)recorded: the first recording of a run replaces older answers. */
  private readonly rerecorded = new Set<string>();
  private lastRun: LastRun | null = null;
  private readonly usedSet = new Set<string>();
  private lastRunWritten = 0;
  private lastRunTimer: NodeJS.Timeout | null = null;
  private exitHook: (() => void) | null = null;

  constructor(dir: string) {
    this.dir = dir;
  }

  private load(name: string): CassetteFile | null {
    const cached = this.files.get(name);
    if (cached) return cached;
    const file = path.join(this.dir, name);
    if (!existsSync(file)) return null;
    const parsed = parseCassette(readFileSync(file, 'utf8'), file);
    this.files.set(name, parsed);
    return parsed;
  }

  /**
   * The next recorded answer for this request, or null. Identical requests get the answers in the order
   * they were recorded; with `wrap`, a request asked more often than recorded starts over from the first
   * (so a long-running replay gateway serves a test suite run after run); without it, it is a miss.
   */
  next(req: CanonicalRequest, wrap: boolean): { file: string; interaction: Interaction } | null {
    const name = cassetteFileName(req);
    const file = this.load(name);
    if (!file || file.digest !== req.digest || file.interactions.length === 0) return null;
    const cursor = this.cursors.get(name) ?? 0;
    if (cursor >= file.interactions.length && !wrap) return null;
    this.cursors.set(name, cursor + 1);
    this.markUsed(name);
    return { file: name, interaction: file.interactions[cursor % file.interactions.length] };
  }

  /**
   * Writes an answer. In `record` mode (`replace`) the first answer recorded for a request in this
   * process replaces what the file held; later ones, and every answer in `replay-or-record`, append.
   * `scrub` runs over the whole file text last, so no secret reaches the disk in any field.
   */
  record(req: CanonicalRequest, interaction: Interaction, opts: { replace: boolean; scrub: (text: string) => string }): string {
    const name = cassetteFileName(req);
    const existing = this.load(name);
    let file = existing && existing.digest === req.digest ? existing : newCassetteFile(req);
    if (opts.replace && !this.rerecorded.has(name)) file = newCassetteFile(req);
    this.rerecorded.add(name);
    file.interactions.push(interaction);
    const text = opts.scrub(serializeCassette(file));
    mkdirSync(this.dir, { recursive: true });
    const target = path.join(this.dir, name);
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, target);
    // Keep in memory what is on disk (scrubbed), so a replay in this process answers the same bytes.
    const stored = parseCassette(text, target);
    this.files.set(name, stored);
    // A request recorded in this run counts as answered: replay-or-record then replays it next time.
    this.cursors.set(name, stored.interactions.length);
    return name;
  }

  /** The recorded request most like this one (same endpoint; same model first, then fewest differing fields). */
  closest(req: CanonicalRequest): Candidate | null {
    let best: (Candidate & { score: number }) | null = null;
    for (const name of listCassetteFiles(this.dir)) {
      let file: CassetteFile | null;
      try {
        file = this.load(name);
      } catch {
        continue;
      }
      if (!file || file.endpoint !== req.endpoint) continue;
      const differs = differingFields(req.body, file.request);
      const score = (file.model === req.model ? 0 : 1000) + differs.length;
      if (!best || score < best.score) best = { file: name, differs, score };
    }
    return best ? { file: best.file, differs: best.differs } : null;
  }

  private markUsed(name: string): void {
    this.lastRun ??= { started_at: new Date().toISOString(), used: [] };
    if (this.usedSet.has(name)) return;
    this.usedSet.add(name);
    this.lastRun.used.push(name);
    // Written in the background (a write per newly used file cost ~2 ms on first use): at most every
    // 100 ms, and at exit, so a suite's last calls are counted too.
    if (this.lastRunTimer) return;
    this.lastRunTimer = setTimeout(() => this.writeLastRun(), 100);
    this.lastRunTimer.unref();
    if (!this.exitHook) {
      this.exitHook = () => this.writeLastRun();
      process.once('exit', this.exitHook);
    }
  }

  /** Writes `.last-run.json` now (tests and `close`); a no-op when nothing changed. */
  writeLastRun(): void {
    if (this.lastRunTimer) clearTimeout(this.lastRunTimer);
    this.lastRunTimer = null;
    if (!this.lastRun || this.lastRunWritten === this.lastRun.used.length) return;
    this.lastRunWritten = this.lastRun.used.length;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(path.join(this.dir, LAST_RUN_FILE), `${JSON.stringify({ started_at: this.lastRun.started_at, used: [...this.lastRun.used].sort() }, null, 2)}\n`);
    } catch {
      /* bookkeeping for `prune --unused` only: a read-only cassette still replays */
    }
  }

  /** Flushes the bookkeeping and forgets the exit hook (a gateway that stops). */
  close(): void {
    this.writeLastRun();
    if (this.exitHook) process.off('exit', this.exitHook);
    this.exitHook = null;
  }
}

/** The cassette files of a directory, sorted (dotfiles and temporary files left out). */
export function listCassetteFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
    .sort();
}

export function readLastRun(dir: string): LastRun | null {
  const file = path.join(dir, LAST_RUN_FILE);
  if (!existsSync(file)) return null;
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<LastRun>;
    return typeof raw.started_at === 'string' && Array.isArray(raw.used) ? { started_at: raw.started_at, used: raw.used.filter((u) => typeof u === 'string') } : null;
  } catch {
    return null;
  }
}
