/**
 * The only place that talks HTTP to providers. One undici Agent (keep-alive pools per origin);
 * timeouts are explicit per request because undici's defaults (300 s) fit none of ours.
 * Policy (which failure fails over, retries) lives in core/routing, not here.
 */
import type { Agent, Dispatcher } from 'undici';
import type { UpstreamRequest } from '../providers/types.ts';
import type { AbortWatch } from './abort-watch.ts';
import { ConnectionGate, QueueTimeout } from './connection-gate.ts';
import type { QueueWaitReporter } from './queue-wait.ts';
import { undiciParts } from './undici-parts.ts';
import { UpstreamCallHandler } from './dispatch-handler.ts';
import type { UpstreamAnswer } from './dispatch-handler.ts';

export interface Timeouts {
  connectMs: number;
  /** Until the response headers arrive. */
  headersMs: number;
  /** Longest silence between two body chunks. */
  idleMs: number;
}

export type TransportFailureKind = 'connect' | 'timeout' | 'reset' | 'aborted';

/** URL → target entries kept at most (Gemini's URLs name the model, so the set grows with models used). */
const MAX_CACHED_TARGETS = 1024;

/** Where a URL goes: undici's dispatcher takes the origin and the path apart. */
interface Target {
  origin: string;
  path: string;
  gate: ConnectionGate;
}

/** A request that got no HTTP answer; `kind` feeds the failover policy. */
export class TransportError extends Error {
  readonly kind: TransportFailureKind;
  readonly code: string;
  constructor(kind: TransportFailureKind, code: string, message: string) {
    super(message);
    this.name = 'TransportError';
    this.kind = kind;
    this.code = code;
  }
}

/** The answer's status and headers, and its body to read (see UpstreamBody). */
export type UpstreamResponse = UpstreamAnswer;

export interface PoolOptions {
  /** Connections per origin unless `byOrigin` says otherwise. */
  connections: number;
  /** Longest wait for a free connection; then the call fails as a timeout (failover, else a 504 the SDKs retry). */
  queueTimeoutMs: number;
}

export const DEFAULT_POOL: PoolOptions = { connections: 256, queueTimeoutMs: 30_000 };

export class Transport {
  private readonly agent: Agent;
  private readonly pool: PoolOptions;
  private readonly gates = new Map<string, ConnectionGate>();
  private readonly targets = new Map<string, Target>();
  private sizes = new Map<string, number>();

  constructor(connectTimeoutMs: number, pool: PoolOptions = DEFAULT_POOL) {
    this.pool = pool;
    this.agent = new undiciParts.Agent({
      connect: { timeout: connectTimeoutMs },
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      pipelining: 1,
      // The gate keeps calls per origin at the pool's size, so undici's own (silent, unbounded) queue stays empty.
      factory: (origin, opts) => new undiciParts.Pool(origin, { ...opts, connections: this.sizeFor(String(origin)) }),
    });
  }

  /** Pool sizes by origin (`https://api.openai.com`), from each provider's setting; others get the default. */
  setPoolSizes(sizes: Map<string, number>): void {
    this.sizes = sizes;
    for (const [origin, gate] of this.gates) gate.setLimit(this.sizeFor(origin));
  }

  poolStats(): Record<string, { active: number; waiting: number; limit: number }> {
    return Object.fromEntries([...this.gates].map(([origin, gate]) => [origin, gate.stats()]));
  }

  /** The answer's status and headers once they come; fails with a `TransportError` when none comes. */
  send(req: UpstreamRequest, timeouts: Timeouts, signal?: AbortWatch, onQueued?: QueueWaitReporter): Promise<UpstreamResponse> {
    const target = this.targetOf(req.url);
    // A free connection (the common case) is dispatched at once: no async function around the answer's promise.
    if (target.gate.tryAcquire()) return this.#dispatch(target, req, timeouts, signal);
    return this.#sendQueued(target, req, timeouts, signal, onQueued);
  }

  async #sendQueued(target: Target, req: UpstreamRequest, timeouts: Timeouts, signal: AbortWatch | undefined, onQueued: QueueWaitReporter | undefined): Promise<UpstreamResponse> {
    let waited: number;
    try {
      waited = await target.gate.acquire(signal);
    } catch (err) {
      if (err instanceof QueueTimeout) throw new TransportError('timeout', 'GATEWAY_POOL_QUEUE_TIMEOUT', err.message);
      throw classifyTransportError(err);
    }
    if (waited > 0) onQueued?.(waited, target.gate.origin);
    return this.#dispatch(target, req, timeouts, signal);
  }

  /** Sends on a connection the gate granted; the grant goes back once the answer is read, fails or is dropped. */
  #dispatch({ origin, path, gate }: Target, req: UpstreamRequest, timeouts: Timeouts, signal: AbortWatch | undefined): Promise<UpstreamResponse> {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      gate.release();
    };
    if (signal?.aborted) {
      release();
      return Promise.reject(classifyTransportError(signal.reason));
    }
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const fail = (err: unknown): void => {
        release();
        reject(classifyTransportError(err));
      };
      const handler = new UpstreamCallHandler(resolve, fail, release, signal);
      try {
        this.agent.dispatch(
          { origin, path, method: req.method as Dispatcher.HttpMethod, headers: req.headers, body: req.bodyBytes ?? req.body, headersTimeout: timeouts.headersMs, bodyTimeout: timeouts.idleMs },
          handler,
        );
      } catch (err) {
        handler.fail(err);
      }
    });
  }

  private sizeFor(origin: string): number {
    return this.sizes.get(origin) ?? this.pool.connections;
  }

  private targetOf(url: string): Target {
    const known = this.targets.get(url);
    if (known !== undefined) return known;
    let origin: string;
    let path: string;
    try {
      const parsed = new URL(url);
      origin = parsed.origin;
      path = `${parsed.pathname}${parsed.search}`;
    } catch {
      // undici refuses it when the request is sent, and that failure is reported as any other.
      origin = url;
      path = '/';
    }
    let gate = this.gates.get(origin);
    if (!gate) {
      gate = new ConnectionGate(origin, this.sizeFor(origin), this.pool.queueTimeoutMs);
      this.gates.set(origin, gate);
    }
    // Parsing a URL cost ~1.5 µs a call; the URLs a gateway calls are few (a provider's base and paths).
    if (this.targets.size >= MAX_CACHED_TARGETS) this.targets.clear();
    const target = { origin, path, gate };
    this.targets.set(url, target);
    return target;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

export function classifyTransportError(err: unknown): TransportError {
  if (err instanceof TransportError) return err;
  const e = err as { code?: string | number; name?: string; message?: string; cause?: { code?: string } };
  // An aborted signal's reason is a DOMException whose numeric `code` (20) would hide its name: the call was
  // cut by its client (or a stopping gateway), which says nothing about the provider's health.
  const code = e?.name === 'AbortError' ? 'AbortError' : String(e?.code ?? e?.cause?.code ?? e?.name ?? 'UNKNOWN');
  const message = e?.message ?? String(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new TransportError('timeout', code, 'connect timeout');
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new TransportError('timeout', code, 'no response before the first-byte timeout');
    case 'UND_ERR_BODY_TIMEOUT':
      return new TransportError('timeout', code, 'the response went silent past the idle timeout');
    case 'UND_ERR_ABORTED':
    case 'AbortError':
      return new TransportError('aborted', code, 'request aborted');
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new TransportError('connect', code, `connection failed (${code})`);
    default:
      return new TransportError('reset', code, `connection error (${code}): ${message}`);
  }
}
