import type { IncomingMessage, ServerResponse } from 'node:http';

// Records what a fake upstream received and how each exchange ended, so tests can assert on the
// exact request the gateway sent and on whether the gateway hung up early (abort propagation).

export interface RecordedRequest {
  method: string;
  /** Path + query as received (still percent-encoded). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON if the body is JSON, else the raw string ('' when there is none). */
  body: unknown;
  /** The body as it came, before any parse (JSON.parse hides a repeated key's first value). */
  rawBody?: string;
  /** True when the client closed the connection before the fake finished its response. */
  aborted: boolean;
  /** True once the response ended or the socket closed. */
  finished: boolean;
}

export class Recorder {
  readonly requests: RecordedRequest[] = [];
  /** Set by the fake when it drops a connection on purpose (reset faults, close()): not a client abort. */
  readonly #selfClosed = new WeakSet<ServerResponse>();
  #waiters = new Set<() => void>();

  /** Records the request on arrival (arrival order); the body is filled in once read. */
  start(req: IncomingMessage, res: ServerResponse): RecordedRequest {
    const record: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: { ...req.headers },
      body: undefined,
      aborted: false,
      finished: false,
    };
    this.requests.push(record);
    res.on('close', () => {
      record.aborted = !res.writableEnded && !this.#selfClosed.has(res);
      record.finished = true;
      this.#notify();
    });
    this.#notify();
    return record;
  }

  markSelfClosed(res: ServerResponse): void {
    this.#selfClosed.add(res);
  }

  waitForRequests(n: number, timeoutMs = 5_000): Promise<void> {
    const done = () => this.requests.length >= n && this.requests[n - 1].finished;
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        const state = this.requests.map((r) => `${r.method} ${r.path} finished=${r.finished}`).join('; ');
        reject(new Error(`waitForRequests(${n}) timed out after ${timeoutMs} ms; have [${state}]`));
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }

  #notify(): void {
    for (const check of [...this.#waiters]) check();
  }
}

export function parseBody(raw: string): unknown {
  if (raw === '') return '';
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
