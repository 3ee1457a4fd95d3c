/**
 * The server's audit writer: rows are queued on the request thread (O(1)), handed to a worker thread
 * in batches (every few ms, or at once when a batch is full: one `postMessage` per batch, not per call,
 * which under load cost ~5% of the main thread), and written there in batches at least every 200 ms. `flush()` stays synchronous (it
 * waits on a shared flag) so readers that need every row, like the admin API, behave as before. If
 * the worker cannot run, rows are written on this thread by a plain `AuditWriter`.
 */
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { AuditWriter } from './audit-writer.ts';
import type { AuditWriterOptions, AuditWriterStats, CallRow, CallRowListener } from './audit-writer.ts';
import { FAILED_SLOT, FLUSHED_SLOT, SLOT_COUNT, WRITTEN_SLOT } from './audit-thread-slots.ts';
import type { AuditThreadData, AuditThreadMessage, AuditThreadReply } from './audit-thread.ts';
import { rowToTuple, tupleToRow } from './call-row-tuple.ts';
import type { Database } from './db.ts';
import { retentionDue } from './retention.ts';

/** The writer interface the Store exposes, whichever thread does the writing. */
export interface AuditSink {
  record(row: CallRow): void;
  onRow(listener: CallRowListener): () => void;
  flush(): number;
  /** As `flush`, without blocking this thread while the writer works (SQLite writers; the admin API's polls use it). */
  flushAsync?(): Promise<number>;
  /** Applies retention (rows, bytes, age) now, on the writer's thread; does not wait for it (SQLite writers). */
  enforceRetention?(): void;
  /** A call began: a writer that works on a thread of its own starts it now, so it is up by the call's row. */
  warm?(): void;
  close(): void;
  stats(): AuditWriterStats;
}

const FLUSH_WAIT_MS = 10_000;
/**
 * How long a row may wait on this thread before it is handed over, and how many make a full batch. Each
 * hand-over wakes the audit thread, which on a busy core preempts this one: every 5 ms, the wake-ups cost
 * ~0.4 µs a call on this thread alone; every 20 ms, a quarter of that. A row still reaches the database
 * within the writer's interval plus this.
 */
const POST_EVERY_MS = 20;
/**
 * The audit thread's young generation, at most (MiB). V8 grew it to 128 MiB under a load of large prompts (a
 * latin1 view of each 64 KiB body to scrub), and an idle thread never shrinks it: it stayed resident.
 */
const AUDIT_THREAD_YOUNG_MB = 16;
const POST_BATCH_ROWS = 256;

// Atomics.waitAsync is in Node 22+ but in TypeScript's ES2024 library, beyond this project's ES2023.
type WaitAsyncResult = { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): WaitAsyncResult }).waitAsync;
const threadFile = new URL(`./audit-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

export class ThreadedAuditWriter implements AuditSink {
  private readonly db: Database;
  private readonly options: AuditWriterOptions;
  private readonly listeners = new Set<CallRowListener>();
  private readonly done = new SharedArrayBuffer(SLOT_COUNT * Int32Array.BYTES_PER_ELEMENT);
  private worker: Worker | null = null;
  /** This end of the port a failing thread hands its unwritten rows back on. */
  private handBack: MessagePort | null = null;
  private readonly data: Omit<AuditThreadData, 'handBack'>;
  private fallback: AuditWriter | null = null;
  private pending: CallRow[] = [];
  /** Rows a failing thread handed back unwritten; the fallback writes them first. */
  private returned: CallRow[] = [];
  private posting: NodeJS.Timeout | null = null;
  private seq = 0;
  private closed = false;
  private readonly counters = { written: 0, transactions: 0, dropped: 0 };

  constructor(db: Database, file: string, options: AuditWriterOptions = {}) {
    this.db = db;
    this.options = options;
    const { onError: _ignored, ...plain } = options;
    this.data = { file, options: plain, done: this.done };
  }

  /**
   * The thread starts with the first rows, not with the store: it costs ~25 MiB (its own V8 and SQLite), which
   * a gateway that has served no call yet, or a command that writes no row, need not pay.
   */
  private thread(): Worker | null {
    if (this.worker || this.fallback || this.closed) return this.worker;
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(threadFile, {
      workerData: { ...this.data, handBack: port2 } satisfies AuditThreadData,
      transferList: [port2],
      resourceLimits: { maxYoungGenerationSizeMb: AUDIT_THREAD_YOUNG_MB },
    });
    worker.unref();
    port1.unref();
    port1.on('message', (m: AuditThreadReply) => this.onReply(m));
    this.handBack = port1;
    worker.on('message', (m: AuditThreadReply) => this.onReply(m));
    worker.on('error', (err) => this.switchToFallback(err));
    // A worker that ends without an error event (terminated, or its thread exited) is as gone: later rows are
    // written on this thread rather than posted to nobody.
    worker.on('exit', (code) => {
      if (this.worker === worker && !this.closed) this.switchToFallback(new Error(`the audit thread exited (code ${code})`));
    });
    this.worker = worker;
    return worker;
  }

  private onReply(m: AuditThreadReply): void {
    if (m.type === 'unwritten') {
      for (const tuple of m.rows) {
        try {
          const row = tupleToRow(tuple);
          if (this.fallback) this.fallback.record(row);
          else this.returned.push(row);
        } catch (error) {
          this.counters.dropped++;
          process.emitWarning(`an audit row handed back could not be read: ${String(error)}`);
        }
      }
      process.emitWarning(`audit worker failed (${m.message}); ${m.rows.length} unwritten rows handed back`);
      return;
    }
    (this.options.onError ?? ((e) => process.emitWarning(`audit write failed: ${String(e)}`)))(m.message);
  }

  /** What a failed thread handed back and this thread has not read yet, read now (its exit or a flush cannot wait for the loop). */
  private takeHandedBack(): void {
    const port = this.handBack;
    if (!port) return;
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) this.onReply(m.message as AuditThreadReply);
  }

  /** No row was ever recorded: there is no thread to flush or close. */
  private get idle(): boolean {
    return !this.worker && !this.fallback && this.pending.length === 0;
  }

  record(row: CallRow): void {
    if (this.closed) {
      this.counters.dropped++;
      return;
    }
    // Listeners first: a full batch is posted at once, and posting moves the row's body bytes to the audit thread.
    for (const listener of this.listeners) {
      try {
        listener(row);
      } catch (error) {
        process.emitWarning(`audit listener failed: ${String(error)}`);
      }
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
  }

  warm(): void {
    this.thread();
  }

  onRow(listener: CallRowListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  flush(): number {
    if (this.fallback) return this.fallback.flush();
    if (this.idle) return 0;
    const before = this.written();
    this.send({ type: 'flush', seq: ++this.seq });
    this.waitFor(this.seq);
    const byThread = this.written() - before;
    // The thread failed during the wait: what it handed back is written here, now.
    return byThread + this.flushFallback();
  }

  /** Rows the fallback holds, written (a thread that failed while a flush waited leaves it some); 0 without one. */
  private flushFallback(): number {
    return this.currentFallback()?.flush() ?? 0;
  }

  /** `fallback` as it is now: a wait may have set it since a method tested it. */
  private currentFallback(): AuditWriter | null {
    return this.fallback;
  }

  enforceRetention(): void {
    if (this.closed) return;
    if (this.fallback) this.fallback.enforceRetention();
    else {
      // Retention is work of its own (a start over a full table has rows to purge): it starts the thread, but
      // only when something may be due; an idle gateway otherwise keeps no audit thread resident.
      if (!this.worker && !(this.options.retention && retentionDue(this.db, this.options.retention))) return;
      this.thread();
      this.send({ type: 'retention' });
    }
  }

  async flushAsync(): Promise<number> {
    if (this.fallback || this.closed) return this.flush();
    // No thread yet means nothing was recorded: waiting on it would only time out.
    if (this.idle) return 0;
    const before = this.written();
    this.send({ type: 'flush', seq: ++this.seq });
    const seq = this.seq;
    const flag = new Int32Array(this.done);
    const deadline = Date.now() + FLUSH_WAIT_MS;
    for (let cur = Atomics.load(flag, FLUSHED_SLOT); cur < seq; cur = Atomics.load(flag, FLUSHED_SLOT)) {
      const left = deadline - Date.now();
      if (left <= 0 || this.fallback) break;
      const wait = waitAsync(flag, FLUSHED_SLOT, cur, Math.min(left, 100));
      if (wait.async) await wait.value;
    }
    return this.written() - before + this.flushFallback();
  }

  close(): void {
    if (this.closed) return;
    if (this.fallback) {
      this.closed = true;
      this.fallback.close();
      return;
    }
    if (this.idle) {
      this.closed = true;
      this.listeners.clear();
      return;
    }
    this.send({ type: 'close', seq: ++this.seq });
    this.waitFor(this.seq);
    this.closed = true;
    this.listeners.clear();
    // The thread failed while closing: the rows it handed back are written here.
    this.currentFallback()?.close();
  }

  stats(): AuditWriterStats {
    if (this.fallback) return this.fallback.stats();
    return { queued: this.pending.length, ...this.counters, written: this.written() };
  }

  private written(): number {
    return Atomics.load(new Int32Array(this.done), WRITTEN_SLOT);
  }

  private post(): void {
    if (this.posting) clearTimeout(this.posting);
    this.posting = null;
    if (this.pending.length === 0) return;
    const worker = this.thread();
    if (!worker) return;
    const rows = this.pending;
    this.pending = [];
    worker.postMessage({ type: 'rows', rows: rows.map(rowToTuple) } satisfies AuditThreadMessage, bodyBuffers(rows));
  }

  private send(m: AuditThreadMessage): void {
    this.post();
    this.worker?.postMessage(m);
  }

  /** Blocks until the worker finished the flush numbered `seq` (or the wait gives up). */
  private waitFor(seq: number): void {
    const flag = new Int32Array(this.done);
    const deadline = Date.now() + FLUSH_WAIT_MS;
    for (let cur = Atomics.load(flag, FLUSHED_SLOT); cur < seq; cur = Atomics.load(flag, FLUSHED_SLOT)) {
      const left = deadline - Date.now();
      if (left <= 0 || this.fallback) return;
      if (Atomics.load(flag, FAILED_SLOT) !== 0) {
        this.switchToFallback(new Error('the audit thread failed'));
        return;
      }
      Atomics.wait(flag, FLUSHED_SLOT, cur, Math.min(left, 100));
    }
  }

  private switchToFallback(err: unknown): void {
    if (this.fallback) return;
    this.worker = null;
    // Rows the thread handed back on its way out come first, whichever of its messages and its exit came in first.
    this.takeHandedBack();
    this.handBack?.close();
    this.handBack = null;
    const rows = this.returned.concat(this.pending);
    this.returned = [];
    this.pending = [];
    if (this.closed) {
      // The store may be closed already: nothing can be written any more, and a stopping process must not crash.
      this.counters.dropped += rows.length;
      process.emitWarning(`audit worker failed after the audit log closed (${String(err)})`);
      return;
    }
    process.emitWarning(`audit worker failed (${String(err)}); writing audit rows on the main thread`);
    this.fallback = new AuditWriter(this.db, this.options);
    for (const row of rows) this.fallback.record(row);
  }
}

/**
 * The body buffers a batch can move to the audit thread rather than copy (a 64 KiB prompt was copied into the
 * message and out of it again, ~10 µs on this thread and as much on that one): each row's own (`CallRow.requestBytes`),
 * once, and only a whole `ArrayBuffer` (a view of part of one would take the rest along).
 */
function bodyBuffers(rows: readonly CallRow[]): ArrayBuffer[] {
  let moved: Set<ArrayBuffer> | null = null;
  for (const r of rows) {
    const b = r.requestBytes;
    if (b === undefined || !(b.buffer instanceof ArrayBuffer) || b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength) continue;
    (moved ??= new Set()).add(b.buffer);
  }
  return moved === null ? [] : [...moved];
}
