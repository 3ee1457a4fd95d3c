/**
 * The server's audit writer: rows are queued on the request thread (O(1)), handed to a worker thread
 * in batches (every few ms, or at once when a batch is full: one `postMessage` per batch, not per call,
 * which under load cost ~5% of the main thread), and written there in batches at least every 200 ms. `flush()` stays synchronous (it
 * waits on a shared flag) so readers that need every row, like the admin API, behave as before. If
 * the worker cannot run, rows are written on this thread by a plain `AuditWriter`.
 */
import { Worker } from 'node:worker_threads';
import { AuditWriter } from './audit-writer.ts';
import type { AuditWriterOptions, AuditWriterStats, CallRow, CallRowListener } from './audit-writer.ts';
import type { AuditThreadData, AuditThreadMessage } from './audit-thread.ts';
import type { Database } from './db.ts';

/** The writer interface the Store exposes, whichever thread does the writing. */
export interface AuditSink {
  record(row: CallRow): void;
  onRow(listener: CallRowListener): () => void;
  flush(): number;
  close(): void;
  stats(): AuditWriterStats;
}

const FLUSH_WAIT_MS = 10_000;
/** How long a row may wait on this thread before it is handed over, and how many make a full batch. */
const POST_EVERY_MS = 5;
const POST_BATCH_ROWS = 256;
const threadFile = new URL(`./audit-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

export class ThreadedAuditWriter implements AuditSink {
  private readonly db: Database;
  private readonly options: AuditWriterOptions;
  private readonly listeners = new Set<CallRowListener>();
  private readonly done = new SharedArrayBuffer(8);
  private worker: Worker | null;
  private fallback: AuditWriter | null = null;
  private pending: CallRow[] = [];
  private posting: NodeJS.Timeout | null = null;
  private seq = 0;
  private closed = false;
  private readonly counters = { written: 0, transactions: 0, dropped: 0 };

  constructor(db: Database, file: string, options: AuditWriterOptions = {}) {
    this.db = db;
    this.options = options;
    const { onError: _ignored, ...plain } = options;
    const data: AuditThreadData = { file, options: plain, done: this.done };
    this.worker = new Worker(threadFile, { workerData: data });
    this.worker.unref();
    this.worker.on('message', (m: { type: string; message?: string }) => {
      if (m.type === 'error') (options.onError ?? ((e) => process.emitWarning(`audit write failed: ${String(e)}`)))(m.message);
    });
    this.worker.on('error', (err) => this.useFallback(err));
  }

  record(row: CallRow): void {
    if (this.closed) {
      this.counters.dropped++;
      return;
    }
    if (this.fallback) this.fallback.record(row);
    else {
      this.pending.push(row);
      if (this.pending.length >= POST_BATCH_ROWS) this.post();
      else if (this.posting === null) {
        this.posting = setTimeout(() => this.post(), POST_EVERY_MS);
        // A stop flushes (flush/close post what is pending), so the timer alone must not hold the process.
        this.posting.unref();
      }
    }
    for (const listener of this.listeners) {
      try {
        listener(row);
      } catch (error) {
        process.emitWarning(`audit listener failed: ${String(error)}`);
      }
    }
  }

  onRow(listener: CallRowListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  flush(): number {
    if (this.fallback) return this.fallback.flush();
    const before = this.written();
    this.send({ type: 'flush', seq: ++this.seq });
    this.waitFor(this.seq);
    return this.written() - before;
  }

  close(): void {
    if (this.closed) return;
    if (this.fallback) {
      this.closed = true;
      this.fallback.close();
      return;
    }
    this.send({ type: 'close', seq: ++this.seq });
    this.waitFor(this.seq);
    this.closed = true;
    this.listeners.clear();
  }

  stats(): AuditWriterStats {
    if (this.fallback) return this.fallback.stats();
    return { queued: this.pending.length, ...this.counters, written: this.written() };
  }

  private written(): number {
    return Atomics.load(new Int32Array(this.done), 1);
  }

  private post(): void {
    if (this.posting) clearTimeout(this.posting);
    this.posting = null;
    if (this.pending.length === 0 || !this.worker) return;
    const rows = this.pending;
    this.pending = [];
    this.worker.postMessage({ type: 'rows', rows } satisfies AuditThreadMessage);
  }

  private send(m: AuditThreadMessage): void {
    this.post();
    this.worker?.postMessage(m);
  }

  /** Blocks until the worker finished the flush numbered `seq` (or the wait gives up). */
  private waitFor(seq: number): void {
    const flag = new Int32Array(this.done);
    const deadline = Date.now() + FLUSH_WAIT_MS;
    for (let cur = Atomics.load(flag, 0); cur < seq; cur = Atomics.load(flag, 0)) {
      const left = deadline - Date.now();
      if (left <= 0 || this.fallback) return;
      Atomics.wait(flag, 0, cur, Math.min(left, 100));
    }
  }

  private useFallback(err: unknown): void {
    if (this.fallback) return;
    process.emitWarning(`audit worker failed (${String(err)}); writing audit rows on the main thread`);
    this.worker = null;
    this.fallback = new AuditWriter(this.db, this.options);
    const rows = this.pending;
    this.pending = [];
    for (const row of rows) this.fallback.record(row);
  }
}
