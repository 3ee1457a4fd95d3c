/**
 * An upstream answer's body, fed by undici's dispatch callbacks and read as text, as bytes, or chunk by
 * chunk (with backpressure: the connection is paused while a reader lags). It replaces undici's request
 * API (an AsyncResource and a Node stream per call): measured in the benchmark, that layer kept every
 * call's objects alive into the next young collection, which then promoted them (~5 KB per call, a
 * third of the scavenger's work), and cost CPU of its own.
 */
import type { Dispatcher } from 'undici';

/** Chunks held unread before the upstream connection is paused. */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * The most a body read whole (a non-stream answer) may hold. Past it the answer is a provider failure: a reply of
 * 700 MB had the gateway hold 1.4 GB and then hang the call, its text too long for a string. Streams are relayed
 * chunk by chunk and have no such cap.
 */
export const MAX_WHOLE_BODY_BYTES = 100 * 1024 * 1024;

/** The reason a body is dropped unread: one error for every call (building one per call costs its stack). */
const DROPPED = new Error('the gateway dropped the rest of the upstream body');

interface Waiter {
  resolve(r: IteratorResult<Buffer>): void;
  reject(err: Error): void;
}

export class UpstreamBody implements AsyncIterable<Buffer> {
  readonly #controller: Dispatcher.DispatchController;
  readonly #done: () => void;
  #chunks: Buffer[] = [];
  #buffered = 0;
  #ended = false;
  #error: Error | null = null;
  #destroyed = false;
  #waiter: Waiter | null = null;
  #flushing = false;
  #collector: { resolve(b: Buffer): void; reject(err: Error): void } | null = null;

  /** `done` runs once, when the body ended, failed or was destroyed (the connection is free then). */
  constructor(controller: Dispatcher.DispatchController, done: () => void) {
    this.#controller = controller;
    this.#done = done;
  }

  /** True once nothing more will come: read to its end, failed, or destroyed. */
  get destroyed(): boolean {
    return this.#destroyed || this.#error !== null || (this.#ended && this.#chunks.length === 0);
  }

  push(chunk: Buffer): void {
    if (this.#destroyed) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    // A waiting reader gets everything this socket read held (undici hands a chunked body over chunk by
    // chunk, synchronously): one read and one write downstream per upstream read, not one per event.
    if (this.#waiter !== null && !this.#flushing) {
      this.#flushing = true;
      queueMicrotask(this.#flush);
    }
    if (this.#collector === null && this.#buffered >= HIGH_WATER_BYTES && !this.#controller.paused) this.#controller.pause();
    else if (this.#collector !== null && this.#buffered > MAX_WHOLE_BODY_BYTES) this.#tooLarge();
  }

  #tooLarge(): void {
    const c = this.#collector;
    this.#collector = null;
    this.destroy();
    c?.reject(Object.assign(new Error(`the provider's answer is over ${MAX_WHOLE_BODY_BYTES / 1024 / 1024} MiB`), { code: 'GATEWAY_UPSTREAM_TOO_LARGE' }));
  }

  end(): void {
    if (this.#destroyed || this.#ended) return;
    this.#ended = true;
    this.#done();
    if (this.#collector !== null) this.#collect();
    const w = this.#waiter;
    // Chunks still held go to the waiting reader first (its flush is queued); the end comes after them.
    if (w !== null && this.#chunks.length === 0) {
      this.#waiter = null;
      w.resolve({ done: true, value: undefined });
    }
  }

  fail(err: Error): void {
    if (this.#destroyed || this.#ended || this.#error !== null) return;
    this.#error = err;
    this.#done();
    const c = this.#collector;
    if (c !== null) {
      this.#collector = null;
      c.reject(err);
    }
    const w = this.#waiter;
    if (w !== null) {
      this.#waiter = null;
      w.reject(err);
    }
  }

  /** Stops reading: a body not yet read to its end is aborted (its connection is not reused). */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#chunks = [];
    this.#buffered = 0;
    if (!this.#ended && this.#error === null) {
      this.#done();
      this.#controller.abort(DROPPED);
    }
    const w = this.#waiter;
    if (w !== null) {
      this.#waiter = null;
      w.resolve({ done: true, value: undefined });
    }
  }

  /** The whole body (what is left of it), once it ended. */
  bytes(): Promise<Buffer> {
    return this.#whole((b) => b);
  }

  text(): Promise<string> {
    return this.#whole((b) => b.toString('utf8'));
  }

  /** One promise per read, whatever the result's form (an async `text()` around `bytes()` was a second, on every call). */
  #whole<T>(as: (body: Buffer) => T): Promise<T> {
    if (this.#error !== null) return Promise.reject(this.#error);
    if (this.#destroyed) return Promise.resolve(as(Buffer.alloc(0)));
    return new Promise<T>((resolve, reject) => {
      this.#collector = {
        resolve: (body) => {
          // A conversion that throws (text past V8's longest string) must reject, or the call waits forever.
          try {
            resolve(as(body));
          } catch (err) {
            reject(err as Error);
          }
        },
        reject,
      };
      if (this.#buffered > MAX_WHOLE_BODY_BYTES) this.#tooLarge();
      else if (this.#ended) this.#collect();
      else if (this.#controller.paused) this.#controller.resume();
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.#next(),
      // Leaving a `for await` early drops the rest, as a Node stream's iterator does.
      return: () => {
        this.destroy();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  readonly #flush = (): void => {
    this.#flushing = false;
    const w = this.#waiter;
    if (w === null || this.#chunks.length === 0) return;
    this.#waiter = null;
    w.resolve({ done: false, value: this.#take() });
  };

  /** Everything held, as one buffer (as a Node stream's `read()` gives it). */
  #take(): Buffer {
    const chunks = this.#chunks;
    this.#chunks = [];
    this.#buffered = 0;
    if (this.#controller.paused && !this.#ended) this.#controller.resume();
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  }

  #next(): Promise<IteratorResult<Buffer>> {
    if (this.#chunks.length > 0) return Promise.resolve({ done: false, value: this.#take() });
    if (this.#error !== null) return Promise.reject(this.#error);
    if (this.#ended || this.#destroyed) return Promise.resolve({ done: true, value: undefined });
    if (this.#controller.paused) this.#controller.resume();
    return new Promise<IteratorResult<Buffer>>((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  #collect(): void {
    const c = this.#collector;
    if (c === null) return;
    this.#collector = null;
    c.resolve(this.#take());
  }
}
