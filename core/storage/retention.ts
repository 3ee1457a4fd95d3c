/**
 * Retention enforced while the server runs, by the audit writer (on its worker thread): the calls
 * table is kept under `maxRows` rows and its pages under `maxBytes`, oldest calls first, rows older
 * than `maxAgeMs` go; once the writer is quiet after a purge (or with a WAL past its limit), the file and the
 * WAL give the space back.
 * Checking costs a counter comparison and three pragmas per batch; the row count is read from the table once.
 */
import { statSync } from 'node:fs';
import type { Database } from './db.ts';

const CHUNK = 5000;

/** Deletes up to `count` of the oldest calls (before `beforeTime` when given), in chunks, through the time index. */
export function trimOldestCalls(db: Database, count: number, beforeTime = Number.MAX_SAFE_INTEGER): number {
  const del = db.prepare(`DELETE FROM calls WHERE rowid IN (SELECT rowid FROM calls WHERE time < ? ORDER BY time ASC LIMIT ?)`);
  let left = Math.max(0, Math.trunc(count));
  let deleted = 0;
  while (left > 0) {
    const n = del.run(beforeTime, Math.min(left, CHUNK)).changes;
    deleted += n;
    left -= n;
    if (n === 0) break;
  }
  return deleted;
}

export interface RetentionOptions {
  maxRows?: number;
  maxBytes?: number;
  maxAgeMs?: number;
  /** How often age is checked (rows and size are checked after every batch: a counter and three pragmas). Default 10 s. */
  checkEveryMs?: number;
  /** How long the writer must be quiet after a purge before the file and the WAL give their free space back. Default 5 s. */
  reclaimAfterQuietMs?: number;
  /**
   * A WAL file larger than this is truncated in the same quiet spell, purge or not. Default 64 MiB. The WAL keeps
   * its largest size: one batch of 2,000 calls with 64 KiB prompts leaves ~130 MB on disk beside the database.
   */
  walLimitBytes?: number;
}

/**
 * Whether `enforce` could delete anything, from indexes and pragmas only (no count of the table): an idle
 * gateway's start and its hourly check then need no audit thread (~20 MiB resident) when nothing is due.
 * May say yes when nothing is due (the row count is bounded by the rowid span), never no when something is.
 */
export function retentionDue(db: Database, options: RetentionOptions, now = Date.now()): boolean {
  // One aggregate a statement: SQLite answers a lone MIN/MAX from the index or the rowid, not by a scan.
  const oldest = (db.prepare('SELECT MIN(time) AS t FROM calls').get() as { t: number | null }).t;
  if (oldest === null) return false;
  if (options.maxAgeMs !== undefined && oldest < now - options.maxAgeMs) return true;
  if (options.maxRows !== undefined) {
    const lo = (db.prepare('SELECT MIN(rowid) AS r FROM calls').get() as { r: number }).r;
    const hi = (db.prepare('SELECT MAX(rowid) AS r FROM calls').get() as { r: number }).r;
    if (hi - lo + 1 > options.maxRows) return true;
  }
  return options.maxBytes !== undefined && usedBytes(db) > options.maxBytes;
}

/** Bytes the database's pages hold, free pages left out. */
function usedBytes(db: Database): number {
  const pages = db.pragma('page_count', { simple: true }) as number;
  return (pages - freePages(db)) * pageSize(db);
}

const freePages = (db: Database): number => db.pragma('freelist_count', { simple: true }) as number;
const pageSize = (db: Database): number => db.pragma('page_size', { simple: true }) as number;

/**
 * Room left under a cap after a trim (rows, or bytes), so a busy server trims a little at a time rather than on
 * every batch; each trim deletes only what is over this line.
 */
const SLACK = 0.01;
/** Free space an idle check gives back even when it deleted nothing (a purge's, left by a stop before the quiet spell). */
const RECLAIM_MIN_BYTES = 8 * 1024 * 1024;
const DEFAULT_RECLAIM_AFTER_QUIET_MS = 5_000;
const DEFAULT_WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * At a cap, every row written under load means old rows deleted; that costs about what writing them did, spread
 * over the batches. Giving the freed pages back to the file system (`incremental_vacuum` moves pages from the end
 * of the file into the holes, then the WAL is truncated) waits for a quiet spell: under load the freed pages are
 * the next rows' pages anyway, and moving them on every purge cost the audit thread 50-100 µs a call for seconds
 * at a time on a gateway at its 2 GiB cap (a load of 100 KB prompts gets there in well under a minute).
 */
export class Retention {
  private readonly db: Database;
  private readonly options: RetentionOptions;
  private rows: number | null = null;
  private lastCheck = 0;
  private freedSinceReclaim = false;

  constructor(db: Database, options: RetentionOptions) {
    this.db = db;
    this.options = options;
  }

  /** How long the writer waits, quiet, after a purge before `reclaim`. */
  get reclaimAfterQuietMs(): number {
    return this.options.reclaimAfterQuietMs ?? DEFAULT_RECLAIM_AFTER_QUIET_MS;
  }

  /** Whether rows were deleted since the free space was last given back, or the WAL file grew past its limit. */
  get reclaimDue(): boolean {
    return this.freedSinceReclaim || this.walBytes() > (this.options.walLimitBytes ?? DEFAULT_WAL_LIMIT_BYTES);
  }

  /** Called after rows were written; returns how many old rows were deleted. Gives no space back (`reclaim`). */
  afterWrite(written: number, now = Date.now()): number {
    // The first count already includes the rows just written.
    this.rows = this.rows === null ? this.count() : this.rows + written;
    let deleted = 0;
    const { maxRows, maxBytes } = this.options;
    if (maxRows !== undefined && this.rows > maxRows) deleted += this.trim(this.rows - Math.floor(maxRows * (1 - SLACK)));
    if (maxBytes !== undefined) deleted += this.enforceBytes(maxBytes);
    if (now - this.lastCheck >= (this.options.checkEveryMs ?? 10_000)) {
      this.lastCheck = now;
      deleted += this.enforceAge(now);
    }
    if (deleted > 0) this.freedSinceReclaim = true;
    return deleted;
  }

  /** Every rule now, written rows or not (at start, and hourly for an idle gateway), then the free space back; returns the rows deleted. */
  enforce(now = Date.now()): number {
    this.lastCheck = Number.NEGATIVE_INFINITY;
    this.rows = null;
    const deleted = this.afterWrite(0, now);
    if (this.reclaimDue || freePages(this.db) * pageSize(this.db) >= RECLAIM_MIN_BYTES) this.reclaim();
    return deleted;
  }

  /** Gives the free pages back to the file system and truncates the WAL (best effort: a busy reader defers it). */
  reclaim(): void {
    this.freedSinceReclaim = false;
    this.db.pragma('incremental_vacuum');
    // TRUNCATE resets the WAL file to zero bytes once every reader is past it.
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      /* busy: the next purge tries again */
    }
  }

  /** The WAL file's size on disk (0 for an in-memory database, or before the first write). */
  private walBytes(): number {
    return statSync(`${this.db.name}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  }

  private count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM calls').get() as { n: number }).n;
  }

  /** `trimOldestCalls`, keeping the row count in step. */
  private trim(n: number, beforeTime?: number): number {
    const deleted = trimOldestCalls(this.db, n, beforeTime);
    this.rows = Math.max(0, (this.rows ?? 0) - deleted);
    return deleted;
  }

  private enforceAge(now: number): number {
    if (this.options.maxAgeMs === undefined) return 0;
    return this.trim(Number.MAX_SAFE_INTEGER, now - this.options.maxAgeMs);
  }

  /** Over the cap, the oldest rows go until the pages in use are under it by the slack; sized from the average row. */
  private enforceBytes(maxBytes: number): number {
    let used = usedBytes(this.db);
    if (used <= maxBytes) return 0;
    const target = Math.floor(maxBytes * (1 - SLACK));
    let deleted = 0;
    for (let round = 0; round < 50 && used > target && (this.rows ?? 0) > 0; round++) {
      const perRow = used / (this.rows ?? 1);
      const n = this.trim(Math.max(1, Math.ceil((used - target) / perRow)));
      deleted += n;
      if (n === 0) break;
      used = usedBytes(this.db);
    }
    return deleted;
  }
}
