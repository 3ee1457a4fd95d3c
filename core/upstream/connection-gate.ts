/**
 * A per-origin gate in front of the connection pool: at most `limit` calls hold a connection, later
 * ones wait in order, and a wait longer than the queue timeout fails instead of hanging for a whole
 * stream's length. undici's own queue has no timeout and says nothing, hence this.
 */
import type { AbortWatch } from './abort-watch.ts';

export class QueueTimeout extends Error {
  readonly origin: string;
  readonly waitedMs: number;
  constructor(origin: string, waitedMs: number) {
    super(`no free connection to ${origin} after waiting ${waitedMs} ms (pool full)`);
    this.origin = origin;
    this.waitedMs = waitedMs;
    this.name = 'QueueTimeout';
  }
}

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

export class ConnectionGate {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  readonly origin: string;
  private limit: number;
  private readonly queueTimeoutMs: number;

  constructor(origin: string, limit: number, queueTimeoutMs: number) {
    this.origin = origin;
    this.limit = limit;
    this.queueTimeoutMs = queueTimeoutMs;
  }

  setLimit(limit: number): void {
    this.limit = limit;
    this.drain();
  }

  /** Takes a slot now if one is free and nobody waits (the common case, without a promise); false otherwise. */
  tryAcquire(): boolean {
    if (this.active < this.limit && this.waiting.length === 0) {
      this.active++;
      return true;
    }
    return false;
  }

  /** Resolves with the time waited (ms) once a slot is held; `release` must be called exactly once after. */
  acquire(signal?: AbortWatch): Promise<number> {
    if (this.tryAcquire()) return Promise.resolve(0);
    const started = performance.now();
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          signal?.removeEventListener('abort', onAbort);
          this.active++;
          resolve(Math.round(performance.now() - started));
        },
        timer: setTimeout(() => {
          this.remove(waiter);
          signal?.removeEventListener('abort', onAbort);
          reject(new QueueTimeout(this.origin, Math.round(performance.now() - started)));
        }, this.queueTimeoutMs),
      };
      const onAbort = () => {
        clearTimeout(waiter.timer);
        this.remove(waiter);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(): void {
    this.active--;
    this.drain();
  }

  stats(): { active: number; waiting: number; limit: number } {
    return { active: this.active, waiting: this.waiting.length, limit: this.limit };
  }

  private drain(): void {
    while (this.active < this.limit && this.waiting.length > 0) (this.waiting.shift() as Waiter).grant();
  }

  private remove(waiter: Waiter): void {
    const i = this.waiting.indexOf(waiter);
    if (i !== -1) this.waiting.splice(i, 1);
  }
}
