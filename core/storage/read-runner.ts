/**
 * Runs the dashboards' heavier reads (read-queries.ts) on a worker thread with its own connection, so
 * log search (and its CSV), provider statistics and usage summaries (through `SqliteCallQueries`) never block the request
 * thread, whatever the size of the audit trail. The worker starts on the first read. Without a file
 * (an in-memory database) or when the worker cannot run, reads run on the caller's connection.
 */
import { Worker } from 'node:worker_threads';
import { StorageError } from './db.ts';
import type { Database, StorageErrorCode } from './db.ts';
import { runReadQuery } from './read-queries.ts';
import type { ReadQueryArg, ReadQueryName, ReadQueryResult, ReadReply, ReadRequest } from './read-queries.ts';

const threadFile = new URL(`./read-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class ReadRunner {
  private readonly db: Database;
  private readonly file: string | null;
  private worker: Worker | null = null;
  private failed = false;
  private closed = false;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  /** `file` null: every read runs on `db`, on the calling thread (the CLI, in-memory tests). */
  constructor(db: Database, file: string | null) {
    this.db = db;
    this.file = file;
  }

  run<N extends ReadQueryName>(name: N, arg: ReadQueryArg<N>): Promise<ReadQueryResult<N>> {
    return this.send({ id: ++this.nextId, name, arg }) as Promise<ReadQueryResult<N>>;
  }

  private send(request: ReadRequest): Promise<unknown> {
    const worker = this.ensureWorker();
    if (!worker) return settle(runReadQuery(this.db, request));
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      worker.ref();
      worker.postMessage(request);
    });
  }

  /** Reads still waiting for the worker. */
  get inFlight(): number {
    return this.pending.size;
  }

  close(): void {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (worker) void worker.terminate();
    this.failAll(new Error('the store is closed'));
  }

  private ensureWorker(): Worker | null {
    if (this.worker || this.failed || this.closed || this.file === null) return this.worker;
    const worker = new Worker(threadFile, { workerData: { file: this.file } });
    worker.unref();
    worker.on('message', (reply: ReadReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      // Only a worker with reads outstanding keeps the process alive.
      if (this.pending.size === 0) worker.unref();
      settle(reply).then(waiting.resolve, waiting.reject);
    });
    worker.on('error', (err) => this.fallBack(err));
    worker.on('exit', (code) => {
      if (!this.closed && this.worker === worker) this.fallBack(new Error(`read worker exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  /** The worker died: the reads it held fail (their callers answer an error); later reads run here. */
  private fallBack(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.worker = null;
    process.emitWarning(`read worker failed (${String(err)}); dashboard reads now run on the main thread`);
    this.failAll(err instanceof Error ? err : new Error(String(err)));
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

function settle(reply: ReadReply): Promise<unknown> {
  if (reply.ok) return Promise.resolve(reply.value);
  const error = reply.name === 'StorageError' && reply.code ? new StorageError(reply.code as StorageErrorCode, reply.message) : new Error(reply.message);
  if (reply.code && !(error instanceof StorageError)) Object.assign(error, { code: reply.code });
  return Promise.reject(error);
}
