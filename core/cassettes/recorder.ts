/**
 * Tees what the gateway writes to a client: the status and headers, and each write as a separate chunk
 * (so a stream keeps its boundaries). It wraps the response's own `writeHead`/`write`/`end`, so it sees
 * exactly the bytes the client gets, whatever handler or protocol wrote them.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

export interface Recording {
  status: number;
  headers: Record<string, string>;
  chunks: Buffer[];
}

/**
 * Headers that describe a connection, a moment or a key rather than the answer: they are not recorded
 * (a replay writes its own `x-request-id`, and Anthropic's `request-id`; the client's key has its own rate-limit state).
 */
const UNRECORDED = /^(x-request-id|request-id|x-gateway-queued-ms|date|connection|keep-alive|transfer-encoding|content-length|set-cookie|vary|retry-after|x-ratelimit-.*|access-control-.*)$/;

function recordableHeaders(headers: OutgoingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (v === undefined || UNRECORDED.test(name)) continue;
    out[name] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

type Encoding = BufferEncoding | undefined;

function toBuffer(chunk: unknown, encoding: Encoding): Buffer | null {
  if (typeof chunk === 'string') return Buffer.from(chunk, encoding ?? 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  return null;
}

function headersArg(args: unknown[]): OutgoingHttpHeaders {
  const h = args.find((a) => a !== null && typeof a === 'object');
  if (!h) return {};
  if (Array.isArray(h)) {
    const out: OutgoingHttpHeaders = {};
    for (let i = 0; i + 1 < h.length; i += 2) out[String(h[i])] = String(h[i + 1]);
    return out;
  }
  return h as OutgoingHttpHeaders;
}

/** Starts teeing `res`; the returned function gives what was written so far. */
export function teeResponse(res: ServerResponse): () => Recording {
  const chunks: Buffer[] = [];
  let headHeaders: OutgoingHttpHeaders = {};
  const writeHead = res.writeHead;
  const write = res.write;
  const end = res.end;

  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    headHeaders = { ...headHeaders, ...headersArg(args.slice(1)) };
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof res.writeHead;

  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    const b = toBuffer(chunk, typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : undefined);
    if (b && b.length > 0) chunks.push(b);
    return (write as (...a: unknown[]) => boolean).apply(this, [chunk, ...rest]);
  } as typeof res.write;

  res.end = function (this: ServerResponse, ...args: unknown[]) {
    const b = typeof args[0] === 'function' ? null : toBuffer(args[0], typeof args[1] === 'string' ? (args[1] as BufferEncoding) : undefined);
    if (b && b.length > 0) chunks.push(b);
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof res.end;

  return () => ({ status: res.statusCode, headers: recordableHeaders({ ...res.getHeaders(), ...headHeaders }), chunks: [...chunks] });
}
