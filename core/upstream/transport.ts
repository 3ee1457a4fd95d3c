/**
 * The only place that talks HTTP to providers. One undici Agent (keep-alive pools per origin);
 * timeouts are explicit per request because undici's defaults (300 s) fit none of ours.
 * Policy (which failure fails over, retries) lives in core/routing, not here.
 */
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { UpstreamRequest } from '../providers/types.ts';

export interface Timeouts {
  connectMs: number;
  /** Until the response headers arrive. */
  headersMs: number;
  /** Longest silence between two body chunks. */
  idleMs: number;
}

export type TransportFailureKind = 'connect' | 'timeout' | 'reset' | 'aborted';

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

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

export class Transport {
  private readonly agent: Agent;

  constructor(connectTimeoutMs: number) {
    this.agent = new Agent({
      connect: { timeout: connectTimeoutMs },
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connections: 128,
      pipelining: 1,
    });
  }

  async send(req: UpstreamRequest, timeouts: Timeouts, signal?: AbortSignal): Promise<UpstreamResponse> {
    try {
      const res = await request(req.url, {
        dispatcher: this.agent,
        method: req.method,
        headers: req.headers,
        body: req.bodyBytes ?? req.body,
        signal,
        headersTimeout: timeouts.headersMs,
        bodyTimeout: timeouts.idleMs,
      });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      throw classifyTransportError(err);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

export function classifyTransportError(err: unknown): TransportError {
  if (err instanceof TransportError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? e?.name ?? 'UNKNOWN';
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
