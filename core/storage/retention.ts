/**
 * Retention enforced while the server runs, by the audit writer (on its worker thread): the calls
 * table is kept under `maxRows` rows and the file under `maxBytes`, oldest calls first, rows older
 * than `maxAgeMs` go, and the WAL is checkpointed and truncated after a purge so disk space comes back.
 * Checking costs a counter comparison per batch; the row count is read from the table once.
 */
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
  /** How often size and age are checked (rows are counted on every batch). Default 10 s. */
  checkEveryMs?: number;
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
  const free = db.pragma('freelist_count', { simple: true }) as number;
  const size = db.pragma('page_size', { simple: true }) as number;
  return (pages - free) * size;
}

/** Room left under the row cap after a trim, so a busy server does not trim on every batch. */
const ROW_SLACK = 0.01;

export class Retention {
  private readonly db: Database;
  private readonly options: RetentionOptions;
  private rows: number | null = null;
  private lastCheck = 0;

  constructor(db: Database, options: RetentionOptions) {
    this.db = db;
    this.options = options;
  }

  /** Called after rows were written; returns how many old rows were deleted. */
  afterWrite(written: number, now = Date.now()): number {
    // The first count already includes the rows just written.
    this.rows = this.rows === null ? this.count() : this.rows + written;
    let deleted = 0;
    const { maxRows } = this.options;
    if (maxRows !== undefined && this.rows > maxRows) {
      deleted += this.trim(this.rows - Math.floor(maxRows * (1 - ROW_SLACK)));
    }
    if (now - this.lastCheck >= (this.options.checkEveryMs ?? 10_000)) {
      this.lastCheck = now;
      deleted += this.enforceAgeAndBytes(now);
    }
    if (deleted > 0) this.reclaim();
    return deleted;
  }

  /** Every rule now, written rows or not (at start, and hourly for an idle gateway); returns the rows deleted. */
  enforce(now = Date.now()): number {
    this.lastCheck = Number.NEGATIVE_INFINITY;
    this.rows = null;
    return this.afterWrite(0, now);
  }

  private count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM calls').get() as { n: number }).n;
  }

  private trim(n: number): number {
    const deleted = trimOldestCalls(this.db, n);
    this.rows = Math.max(0, (this.rows ?? 0) - deleted);
    return deleted;
  }

  private enforceAgeAndBytes(now: number): number {
    let deleted = 0;
    if (this.options.maxAgeMs !== undefined) {
      const n = trimOldestCalls(this.db, Number.MAX_SAFE_INTEGER, now - this.options.maxAgeMs);
      this.rows = Math.max(0, (this.rows ?? 0) - n);
      deleted += n;
    }
    const { maxBytes } = this.options;
    if (maxBytes === undefined) return deleted;
    for (let round = 0; round < 50 && usedBytes(this.db) > maxBytes && (this.rows ?? 0) > 0; round++) {
      // A tenth of the rows a round: the file shrinks only as pages empty, so go in steps and re-measure.
      const n = this.trim(Math.ceil((this.rows ?? 0) / 10));
      deleted += n;
      this.reclaim();
      if (n === 0) break;
    }
    return deleted;
  }

  private reclaim(): void {
    this.db.pragma('incremental_vacuum');
    // TRUNCATE resets the WAL file to zero bytes once every reader is past it; best effort.
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      /* busy: the next purge tries again */
    }
  }
}
