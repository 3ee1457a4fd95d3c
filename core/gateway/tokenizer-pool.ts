/**
 * Exact token counts for texts too large to tokenise on the request thread (45 MB takes over a second):
 * they go to a tokenizer worker, so other requests keep being answered meanwhile. One worker, started on
 * first need and stopped after a minute idle (the tokenizer's tables cost ~70 MiB). A worker that cannot
 * run falls back to the length estimate (4 characters a token), never to tokenising here.
 */
import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { TokenizeReply, TokenizeRequest } from './tokenizer-thread.ts';

const threadFile = new URL(`./tokenizer-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
const IDLE_STOP_MS = 60_000;

/** `start` and `end` (with the characters counted) around each off-thread count: for tests and diagnostics. */
export const tokenizerEvents = new EventEmitter();

const estimate = (texts: readonly string[]): number => texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0);

class TokenizerPool {
  private worker: Worker | null = null;
  private failed = false;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (n: number) => void; chars: number; texts: readonly string[] }>();
  private idle: NodeJS.Timeout | null = null;

  count(texts: readonly string[]): Promise<number> {
    const worker = this.ensureWorker();
    if (!worker) return Promise.resolve(estimate(texts));
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const id = ++this.nextId;
    const chars = texts.reduce((n, t) => n + t.length, 0);
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, chars, texts });
      worker.ref();
      tokenizerEvents.emit('start', { id, chars });
      worker.postMessage({ id, texts: [...texts] } satisfies TokenizeRequest);
    });
  }

  private ensureWorker(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    let worker: Worker;
    try {
      worker = new Worker(threadFile);
    } catch (err) {
      this.fail(err);
      return null;
    }
    worker.unref();
    worker.on('message', (reply: TokenizeReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      tokenizerEvents.emit('end', { id: reply.id, chars: waiting.chars, tokens: reply.tokens });
      waiting.resolve(reply.tokens);
      if (this.pending.size === 0) {
        worker.unref();
        this.idle = setTimeout(() => this.stop(worker), IDLE_STOP_MS);
        this.idle.unref();
      }
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = null;
      this.settleWithEstimates();
    });
    this.worker = worker;
    return worker;
  }

  private stop(worker: Worker): void {
    if (this.worker !== worker || this.pending.size > 0) return;
    this.worker = null;
    void worker.terminate();
  }

  private fail(err: unknown): void {
    if (!this.failed) process.emitWarning(`tokenizer worker failed (${String(err)}); large texts are estimated by length`);
    this.failed = true;
    this.worker = null;
    this.settleWithEstimates();
  }

  /** Counts a dead worker still owed are answered by the length estimate. */
  private settleWithEstimates(): void {
    for (const [id, p] of this.pending) {
      tokenizerEvents.emit('end', { id, chars: p.chars, tokens: null });
      p.resolve(estimate(p.texts));
    }
    this.pending.clear();
  }
}

let pool: TokenizerPool | null = null;

/** The exact token count of `texts` (gpt-tokenizer's `encode`), computed on the tokenizer worker. */
export function countTokensOffThread(texts: readonly string[]): Promise<number> {
  pool ??= new TokenizerPool();
  return pool.count(texts);
}
