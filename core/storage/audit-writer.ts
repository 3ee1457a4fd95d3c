/**
 * The audit trail's write side. Requests must not wait on disk, so `record` only queues the row; a
 * timer writes the queue in one transaction per batch at least every `flushIntervalMs`. A graceful
 * stop calls `close()`, which writes everything; a crash loses at most one interval of rows.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from './db.ts';
import { Retention } from './retention.ts';
import type { RetentionOptions } from './retention.ts';
import type { CallRow, Pricing } from './call-row.ts';
import { CallInsert } from './call-insert.ts';
import { RunningTotals } from './running-totals.ts';
import { MARKER_RESERVE_BYTES, charBoundary, storedBody, truncationMarker } from './stored-body.ts';

export type { CallRow, Pricing } from './call-row.ts';

export interface AuditWriterOptions {
  flushIntervalMs?: number;
  /** Rows per transaction; a queue this long is written at once rather than at the next interval. */
  maxBatch?: number;
  /** Rows held in memory at most while the database cannot be written; newer rows are dropped beyond it. */
  maxQueue?: number;
  maxBodyBytes?: number;
  /** Retention enforced after writes (the server's `audit` settings); none when absent. */
  retention?: RetentionOptions;
  /** Told about write failures (the writer never throws from its timer). Defaults to a process warning. */
  onError?: (error: unknown) => void;
  /**
   * Frees a row's `requestBytes` once the row is written or given up, for a writer that owns them alone (the audit
   * thread: they came by transfer). Left to that thread's collector, which an idle thread never runs, up to
   * ~100 MiB of 64 KiB prompts stayed resident after a load of large prompts.
   */
  releaseRequestBytes?: boolean;
}

export interface AuditWriterStats {
  queued: number;
  written: number;
  transactions: number;
  dropped: number;
}

export type CallRowListener = (row: CallRow) => void;

export const DEFAULT_FLUSH_INTERVAL_MS = 200;
/**
 * Each transaction writes again the last, partly filled pages of the table and its indexes (a WAL frame, then a
 * checkpoint write, each): under load a batch of 2,000 rows (~200 ms at 10,000 calls/s) pays that a quarter as
 * often per row as one of 500.
 */
export const DEFAULT_MAX_BATCH = 2000;
export const DEFAULT_MAX_QUEUE = 50_000;
export const MAX_BODY_BYTES = 64 * 1024;

const PRICINGS: ReadonlySet<string> = new Set<Pricing>(['priced', 'estimated', 'unpriced']);

export class AuditWriter {
  private readonly flushIntervalMs: number;
  private readonly maxBatch: number;
  private readonly maxQueue: number;
  private readonly maxBodyBytes: number;
  private readonly onError: (error: unknown) => void;
  private readonly insert: CallInsert;
  private readonly writeBatch: BetterSqlite3.Transaction<(rows: CallRow[]) => void>;
  private readonly totals: RunningTotals;
  private readonly listeners = new Set<CallRowListener>();
  private queue: CallRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** Gives a purge's free space back once no batch came for a while (`Retention.reclaimAfterQuietMs`). */
  private reclaimTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly counters = { written: 0, transactions: 0, dropped: 0 };
  private readonly retention: Retention | null;
  private readonly releaseRequestBytes: boolean;
  /** performance.now() at the end of the last flush. */
  private lastFlushAt = Number.NEGATIVE_INFINITY;

  constructor(db: Database, options: AuditWriterOptions = {}) {
    this.retention = options.retention ? new Retention(db, options.retention) : null;
    this.releaseRequestBytes = options.releaseRequestBytes === true;
    this.flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    this.maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH);
    this.maxQueue = Math.max(this.maxBatch, options.maxQueue ?? DEFAULT_MAX_QUEUE);
    this.maxBodyBytes = Math.max(MARKER_RESERVE_BYTES * 2, options.maxBodyBytes ?? MAX_BODY_BYTES);
    this.onError = options.onError ?? ((error) => process.emitWarning(`audit write failed: ${String(error)}`));
    this.insert = new CallInsert(db);
    this.totals = new RunningTotals(db);
    this.writeBatch = db.transaction((rows: CallRow[]) => {
      try {
        for (const row of rows) this.insertRow(row);
        this.totals.write();
      } finally {
        // Written, or rolled back with a refused row: either way these counts must not reach the next batch.
        this.totals.discard();
      }
    });
  }

  /** Queues a row and tells listeners; O(1), no I/O. The row must not be mutated afterwards. */
  record(row: CallRow): void {
    if (this.closed || this.queue.length >= this.maxQueue) {
      this.counters.dropped++;
      this.onError(new Error(this.closed ? `audit writer closed; call ${row.id} not recorded` : `audit queue full; call ${row.id} not recorded`));
      return;
    }
    this.queue.push(row);
    for (const listener of this.listeners) {
      try {
        listener(row);
      } catch (error) {
        this.onError(error);
      }
    }
    // After a quiet spell the row is written at once (a tool reading the log right after its call finds it);
    // under load rows wait for the interval and go in batches.
    if (this.queue.length >= this.maxBatch || performance.now() - this.lastFlushAt >= this.flushIntervalMs) this.scheduleImmediateFlush();
    else this.scheduleFlush();
  }

  /** Listeners (the admin SSE stream) see each row as queued, bodies not yet capped. Returns an unsubscribe. */
  onRow(listener: CallRowListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Writes every queued row now, `maxBatch` rows per transaction. If the database stays locked past the
   * busy timeout, unwritten rows go back to the queue for the next try. Returns the rows written.
   */
  flush(): number {
    this.clearTimers();
    let written = 0;
    while (this.queue.length > 0) {
      const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
      try {
        this.writeBatch.immediate(batch);
        this.counters.transactions++;
        written += batch.length;
      } catch (error) {
        if (isLockError(error)) {
          this.queue = batch.concat(this.queue);
          this.onError(error);
          if (!this.closed) this.scheduleFlush();
          break;
        }
        // A row the database refuses must not take the rest of its batch down with it.
        written += this.writeOneByOne(batch);
      }
      // Written, or refused for good: the batch is done with (a locked one went back to the queue above).
      this.release(batch);
    }
    this.counters.written += written;
    this.lastFlushAt = performance.now();
    if (this.retention && written > 0) {
      try {
        this.retention.afterWrite(written);
      } catch (error) {
        this.onError(error);
      }
      this.scheduleReclaim(this.retention);
    }
    return written;
  }

  /** The same as `flush` (this writer works on the caller's thread); for the `AuditSink` interface. */
  async flushAsync(): Promise<number> {
    return this.flush();
  }

  /** Applies retention now (after writing what is queued); none without retention options. */
  enforceRetention(): number {
    this.flush();
    if (!this.retention) return 0;
    try {
      return this.retention.enforce();
    } catch (error) {
      this.onError(error);
      return 0;
    }
  }

  /** Writes what is queued and stops; later `record` calls are dropped. Does not close the database. */
  close(): void {
    this.flush();
    this.closed = true;
    this.clearTimers();
    // The next start's retention check gives a purge's space back (`Retention.enforce`), not this stop.
    if (this.reclaimTimer !== null) clearTimeout(this.reclaimTimer);
    this.reclaimTimer = null;
    this.listeners.clear();
  }

  stats(): AuditWriterStats {
    return { queued: this.queue.length, ...this.counters };
  }

  /** Hands over the rows queued and not yet written, keeping none (a writer whose thread is going away). */
  takeQueued(): CallRow[] {
    const rows = this.queue;
    this.queue = [];
    this.clearTimers();
    return rows;
  }

  private writeOneByOne(rows: CallRow[]): number {
    let written = 0;
    for (const row of rows) {
      try {
        this.writeBatch([row]);
        this.counters.transactions++;
        written++;
      } catch (error) {
        this.counters.dropped++;
        this.onError(error);
      }
    }
    return written;
  }

  /** The request bytes of rows that are done with (written, or refused for good), freed now when this writer owns them. */
  private release(rows: readonly CallRow[]): void {
    if (!this.releaseRequestBytes) return;
    for (const row of rows) if (row.requestBytes !== undefined) freeBuffer(row.requestBytes);
  }

  /**
   * After a purge, or with the WAL past its limit: the space goes back when the writer has been quiet that long
   * (each batch starts the wait again).
   */
  private scheduleReclaim(retention: Retention): void {
    if (this.reclaimTimer !== null) {
      this.reclaimTimer.refresh();
      return;
    }
    if (!retention.reclaimDue) return;
    this.reclaimTimer = setTimeout(() => {
      this.reclaimTimer = null;
      try {
        // An explicit `enforceRetention` may have given it back already.
        if (retention.reclaimDue) retention.reclaim();
      } catch (error) {
        this.onError(error);
      }
    }, retention.reclaimAfterQuietMs);
    this.reclaimTimer.unref();
  }

  private scheduleFlush(): void {
    if (this.timer !== null || this.immediate !== null) return;
    this.timer = setTimeout(() => this.flushFromTimer(), this.flushIntervalMs);
    // The writer must never keep a finished process alive; shutdown paths call close().
    this.timer.unref();
  }

  private scheduleImmediateFlush(): void {
    if (this.immediate !== null) return;
    this.immediate = setImmediate(() => this.flushFromTimer());
    this.immediate.unref();
  }

  private flushFromTimer(): void {
    this.timer = null;
    this.immediate = null;
    try {
      this.flush();
    } catch (error) {
      this.onError(error);
    }
  }

  private clearTimers(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private insertRow(row: CallRow): void {
    // The schema's CHECK, kept here: the audit thread's connection does not evaluate CHECK constraints.
    if (!PRICINGS.has(row.pricing)) throw new Error(`call ${row.id}: pricing ${JSON.stringify(row.pricing)} is not one of ${[...PRICINGS].join(', ')}`);
    const costUsd = typeof row.costUsd === 'number' && Number.isFinite(row.costUsd) ? row.costUsd : null;
    const time = int(row.time);
    const status = int(row.status);
    const inputTokens = int(row.inputTokens);
    const outputTokens = int(row.outputTokens);
    const cachedTokens = int(row.cachedTokens);
    const cacheWriteTokens = int(row.cacheWriteTokens);
    const reasoningTokens = int(row.reasoningTokens);
    // In CALL_COLUMNS order, bound positionally: named binding cost ~10 µs more per row.
    this.insert.run([
      row.id, time, row.keyId, row.keyName, row.endpoint, row.modelRequested, row.model, row.provider, status, row.errorType,
      row.errorMessage, row.stream ? 1 : 0, inputTokens, outputTokens, cachedTokens, cacheWriteTokens, reasoningTokens,
      costUsd, row.pricing, row.priceVersion, int(row.latencyMs), row.ttftMs == null ? null : int(row.ttftMs), int(row.attempts),
      typeof row.attemptsJson === 'string' ? row.attemptsJson : '[]',
      storedBody(row.requestBytes ?? row.requestBody, row.bodySecrets, this.maxBodyBytes, row.requestBytesTotal),
      storedBody(row.responseBody, row.bodySecrets, this.maxBodyBytes),
      typeof row.userAgent === 'string' ? row.userAgent.slice(0, 512) : null,
      typeof row.sessionId === 'string' ? row.sessionId.slice(0, 200) : null,
      row.replayed === true ? 1 : 0,
    ]);
    this.totals.add({
      time, keyId: row.keyId, keyName: row.keyName, modelRequested: row.modelRequested, model: row.model, provider: row.provider,
      status, inputTokens, outputTokens, cachedTokens, cacheWriteTokens, reasoningTokens, costUsd, pricing: row.pricing,
    });
  }
}

/**
 * Caps a body at `maxBytes` of UTF-8 (marker included), cutting on a character boundary and saying how
 * much was cut, e.g. `…[truncated 1234 bytes]`.
 */
export function truncateBody(body: string | null, maxBytes: number = MAX_BODY_BYTES): string | null {
  if (body === null) return null;
  // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no byte count.
  if (body.length * 3 <= maxBytes) return body;
  const totalBytes = Buffer.byteLength(body, 'utf8');
  if (totalBytes <= maxBytes) return body;
  const budget = maxBytes - MARKER_RESERVE_BYTES;
  // As many bytes as units: plain ASCII (most prompts and code), cut where the bytes run out, no encoding.
  if (totalBytes === body.length) return `${body.slice(0, budget)}${truncationMarker(totalBytes - budget)}`;
  // Every UTF-16 unit is at least one byte, so the first `budget` units hold at least `budget` bytes.
  const head = Buffer.from(body.slice(0, budget), 'utf8');
  const cut = charBoundary(head, budget);
  return `${head.subarray(0, cut).toString('utf8')}${truncationMarker(totalBytes - cut)}`;
}

function int(value: number): number {
  return Number.isFinite(value) ? Math.round(value) : 0;
}

function isLockError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

// `ArrayBuffer.prototype.transfer` is ES2024, beyond this project's ES2023 library (Node has it since 21).
type TransferableArrayBuffer = ArrayBuffer & { transfer(length?: number): ArrayBuffer; readonly detached: boolean };

/** Frees a view's whole buffer at once (moved to a new empty one), instead of when the collector finds it. */
function freeBuffer(view: Uint8Array): void {
  const buffer = view.buffer as TransferableArrayBuffer;
  if (buffer instanceof ArrayBuffer && !buffer.detached && typeof buffer.transfer === 'function') buffer.transfer(0);
}
