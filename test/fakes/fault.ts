import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Recorder, parseBody } from './recorder.ts';
import type { RecordedRequest } from './recorder.ts';

// The harness shared by the three fake upstreams: a real node:http server on 127.0.0.1 that records
// every request and can misbehave on demand. Each provider module supplies only its routes and wire
// format (a ProviderSpec); every fault is applied here, the same way for all three, so a gateway test
// can script "first provider 529s, second resets mid-stream" without caring about wire details.

export type { RecordedRequest } from './recorder.ts';

export type Fault =
  /** Default body = that provider's own error shape for the status. */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Wait before sending headers, then behave normally. */
  | { kind: 'delay'; ms: number }
  /** Accept and never answer (until close). */
  | { kind: 'hang' }
  /** Destroy the socket (TCP RST) before any response. */
  | { kind: 'reset' }
  /** Streams: send N SSE events then close the socket; non-stream: headers + half the body, then close. */
  | { kind: 'reset-after-chunks'; chunks: number }
  /**
   * Streams: send N SSE events, then end the response cleanly (the chunked body's last chunk, no reset), as a
   * server whose handler gave up does; a negative N counts from the end (-1: all but the last event).
   */
  | { kind: 'end-after-chunks'; chunks: number }
  /** 200 with a JSON (or event-stream) content type but a body that is not valid JSON / garbage SSE data. */
  | { kind: 'malformed' }
  /** Streams: wait gapMs between events. */
  | { kind: 'slow-stream'; gapMs: number };

export interface FakeOptions {
  /** Served by the list endpoint. */
  models: string[];
  /** Cached prompt tokens: OpenAI cached_tokens / Anthropic cache_read_input_tokens / Gemini cachedContentTokenCount. */
  cachedTokens?: number;
  /** Anthropic cache_creation_input_tokens (the others ignore it). */
  cacheWriteTokens?: number;
  /** OpenAI reasoning_tokens / Gemini thoughtsTokenCount (Anthropic: counted into output_tokens). */
  reasoningTokens?: number;
  /** Never report usage (tests the gateway's estimate). */
  omitUsage?: boolean;
  /** OpenAI fake only: 400 invalid_request_error when the body has stream_options. */
  rejectStreamOptions?: boolean;
  /** OpenAI fake only: usage on the finish_reason chunk instead of a separate choices:[] chunk. */
  usageOnFinishChunk?: boolean;
  /** OpenAI fake only: `usage: null` on every chunk that carries choices, as OpenAI does with include_usage. */
  usageOnEveryChunk?: boolean;
  /** When set, requests without this key get the provider's 401. */
  requireKey?: string;
  /** Scripted tool call: when this tool is declared and the user just spoke, call it with these arguments. */
  toolCall?: { name: string; arguments: Record<string, unknown> };
  /** Anthropic fake only: answer with a signed thinking block before the content. */
  thinking?: { text: string; signature: string };
  /**
   * OpenAI fakes: answer this many words (tokens) when the request allows it: a model that uses all
   * the output it may (up to `max_tokens`, or this when the request names none). Off: the short echo.
   */
  longAnswers?: number;
  /**
   * Gemini fake only: accept Google's documented placeholder `skip_thought_signature_validator` in place
   * of a signature the fake issued (the real API does, at a quality cost). Off by default, so a test
   * proves the real signature came back.
   */
  acceptPlaceholderSignature?: boolean;
  /**
   * OpenAI fake only: DeepSeek's thinking mode. Every answer carries this `reasoning_content` (before the content in
   * a stream), and a request whose assistant turn made tool calls without its `reasoning_content` is refused with
   * DeepSeek's 400.
   */
  reasoningContent?: string;
  /**
   * Gemini fake only: a tool call is answered as this many parallel calls of the tool (Gemini has no switch
   * that asks for one at most). Default 1.
   */
  parallelCalls?: number;
}

export interface FakeUpstream {
  /** Base URL as that provider's own SDK expects it (OpenAI: ends in /v1; Anthropic, Gemini: the origin). */
  url: string;
  port: number;
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** Each request takes the next queued fault (FIFO); when the queue is empty, the default fault applies. */
  queueFault(...faults: Fault[]): void;
  /** null = behave normally. */
  setDefaultFault(f: Fault | null): void;
  /** Read on every request, so tests may change knobs between calls. */
  options: FakeOptions;
  /** Resolves once `requests.length >= n` and the n-th request has finished or been aborted. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Also destroys open sockets, so a hung request never keeps a test alive. */
  close(): Promise<void>;
}

export interface SseEvent {
  /** The `event:` line; omitted for OpenAI and Gemini, whose streams have none. */
  event?: string;
  /** Written verbatim after `data: ` (callers serialise JSON themselves, OpenAI also sends `[DONE]`). */
  data: string;
}

/** One request as a provider module sees it; the writers apply the request's fault. */
export interface Exchange {
  method: string;
  /** Path without the query, still percent-encoded. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
  options: FakeOptions;
  requestId: string;
  json(status: number, body: unknown, headers?: Record<string, string>): Promise<void>;
  sse(events: SseEvent[], headers?: Record<string, string>): Promise<void>;
}

export interface ErrorReply {
  body: unknown;
  headers?: Record<string, string>;
}

export interface ProviderSpec {
  /** Appended to the origin to form `FakeUpstream.url`. */
  basePath: string;
  defaultModels: string[];
  /** Header carrying the request id on every response, if the provider sends one. */
  requestIdHeader?: string;
  /** The provider's own error body (and headers) for a status, used by the `status` fault. */
  errorReply(status: number, requestId: string): ErrorReply;
  handle(x: Exchange): Promise<void>;
}

const MALFORMED_JSON = '{"id": "oops", "choices": [ <html>502 Bad Gateway</html>';

export async function startFakeServer(spec: ProviderSpec, options: Partial<FakeOptions> = {}): Promise<FakeUpstream> {
  const recorder = new Recorder();
  const queue: Fault[] = [];
  let defaultFault: Fault | null = null;
  const fakeOptions: FakeOptions = { ...options, models: options.models ?? [...spec.defaultModels] };
  const timers = new Set<NodeJS.Timeout>();
  const open = new Set<ServerResponse>();
  let closing = false;

  // Cancelled timers never resolve: the handler just stops, and nothing keeps the event loop alive.
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const dropConnection = (res: ServerResponse, hard: boolean) => {
    recorder.markSelfClosed(res);
    const socket = res.socket;
    if (!socket) return;
    if (hard) socket.resetAndDestroy();
    else socket.destroy();
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const record = recorder.start(req, res);
    open.add(res);
    res.on('close', () => open.delete(res));
    res.on('error', () => {}); // a client that hangs up mid-write is an expected outcome here
    let raw: string;
    try {
      raw = await readBody(req);
    } catch {
      return; // client went away while uploading; the recorder has already noted it
    }
    record.body = parseBody(raw);
    record.rawBody = raw;
    const fault = queue.length > 0 ? queue.shift()! : defaultFault;
    const requestId = `req_${randomBytes(12).toString('hex')}`;
    if (spec.requestIdHeader) res.setHeader(spec.requestIdHeader, requestId);

    switch (fault?.kind) {
      case 'hang':
        return;
      case 'reset':
        dropConnection(res, true);
        return;
      case 'delay':
        await sleep(fault.ms);
        if (res.destroyed) return;
        break;
      case 'status': {
        const reply = spec.errorReply(fault.status, requestId);
        const body = fault.body ?? reply.body;
        const isText = typeof body === 'string';
        res.writeHead(fault.status, {
          'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
          ...reply.headers,
          ...fault.headers,
        });
        res.end(isText ? body : JSON.stringify(body));
        return;
      }
    }

    const url = new URL(req.url ?? '/', 'http://fake');
    const exchange: Exchange = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: record.body,
      options: fakeOptions,
      requestId,
      json: (status, body, headers) => writeJson(res, fault, status, body, headers),
      sse: (events, headers) => writeSse(res, fault, events, headers),
    };
    await spec.handle(exchange);
  };

  const writeJson = async (
    res: ServerResponse,
    fault: Fault | null,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (res.destroyed) return;
    const text = fault?.kind === 'malformed' ? MALFORMED_JSON : JSON.stringify(body);
    const bytes = Buffer.from(text);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length, ...headers });
    if (fault?.kind === 'reset-after-chunks') {
      // Content-Length promises the whole body, so the client sees a truncated response, not a short one.
      await write(res, bytes.subarray(0, Math.floor(bytes.length / 2)));
      dropConnection(res, false);
      return;
    }
    res.end(bytes);
  };

  const writeSse = async (
    res: ServerResponse,
    fault: Fault | null,
    events: SseEvent[],
    headers: Record<string, string> = {},
  ) => {
    if (res.destroyed) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...headers,
    });
    if (fault?.kind === 'malformed') {
      // Keep the first event's name: the Anthropic SDK silently skips unnamed events, and garbage the
      // client never parses would not test anything.
      res.end(formatEvent({ event: events[0]?.event, data: '{"type": garbage, not json' }));
      return;
    }
    for (let i = 0; i < events.length; i++) {
      if (fault?.kind === 'reset-after-chunks' && i === fault.chunks) {
        dropConnection(res, false);
        return;
      }
      if (fault?.kind === 'end-after-chunks' && i === (fault.chunks < 0 ? events.length + fault.chunks : fault.chunks)) {
        res.end();
        return;
      }
      if (fault?.kind === 'slow-stream' && i > 0) await sleep(fault.gapMs);
      if (res.destroyed) return;
      await write(res, formatEvent(events[i]));
    }
    res.end();
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      // A bug in a fake should fail the test loudly, not hang it.
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake upstream crashed: ${String(err instanceof Error ? err.stack : err)}`);
      } else {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}${spec.basePath}`,
    port,
    requests: recorder.requests,
    queueFault: (...faults) => void queue.push(...faults),
    setDefaultFault: (f) => {
      defaultFault = f;
    },
    options: fakeOptions,
    waitForRequests: (n, timeoutMs) => recorder.waitForRequests(n, timeoutMs),
    close: async () => {
      if (closing) return;
      closing = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      // Wait for each open response's 'close' too, so records are final (finished) once close() resolves.
      const responsesClosed = [...open].map((res) => {
        recorder.markSelfClosed(res);
        return new Promise<void>((resolve) => res.once('close', () => resolve()));
      });
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.all([serverClosed, ...responsesClosed]);
    },
  };
}

function formatEvent(e: SseEvent): string {
  return `${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${e.data}\n\n`;
}

/** Resolves once the chunk is handed to the kernel, or the connection is gone. */
function write(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const onClose = () => resolve();
    res.once('close', onClose);
    res.write(chunk, () => {
      res.off('close', onClose);
      resolve();
    });
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    req.on('aborted', () => reject(new Error('client aborted the upload')));
  });
}
