/**
 * The floor every ratio is against: a lean `node:http` + `undici.request` pass-through proxy, written the
 * way a careful proxy is written, and nothing more. No parsing, no auth, no accounting.
 *
 * Unlike bare-proxy.ts it does not use `stream.pipeline` (which builds an AbortSignal and a DOMException on
 * every request): the upstream body is written chunk by chunk, pausing while the client's socket is full.
 * A client that leaves mid-request (while the upstream is still answering, or mid-upload) aborts the upstream
 * call from `res.on('close')`, and nothing throws: every stream has an error listener.
 *
 * Run as a child: `node lean-proxy.ts --port N --target http://127.0.0.1:U`; `GET /healthz` answers 200.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { endToEnd, proxyArgs } from './proxy-args.ts';

const { port, target } = proxyArgs();

// The same pool shape as the gateway's Transport (256 connections, its default), so the comparison is
// about the work per request.
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256, pipelining: 1 });

const HEALTH = Buffer.from('{"ok":true}');

/** Relays the upstream body: one write per upstream chunk, paused while the client's buffer is full. */
function relay(body: Readable, res: ServerResponse): void {
  body.on('data', (chunk: Buffer) => {
    if (!res.write(chunk)) body.pause();
  });
  res.on('drain', () => body.resume());
  body.on('end', () => res.end());
  // An upstream that breaks mid-body: the client must see a cut connection, not a clean end.
  body.on('error', () => res.destroy());
}

function badGateway(res: ServerResponse, err: Error): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { message: `lean proxy: ${err.message}`, type: 'api_error', param: null, code: 'upstream_error' } });
  res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function proxy(req: IncomingMessage, res: ServerResponse): void {
  const abort = new AbortController();
  // The client left before the answer was complete: stop the upstream call (it frees the connection).
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  req.on('error', () => abort.abort());
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  request(target + (req.url ?? '/'), {
    dispatcher: agent,
    method: (req.method ?? 'GET') as 'GET',
    headers: endToEnd(req.headers),
    body: hasBody ? req : undefined,
    signal: abort.signal,
    headersTimeout: 600_000,
    bodyTimeout: 60_000,
  }).then(
    (up) => {
      if (res.destroyed) {
        up.body.on('error', () => undefined);
        up.body.destroy();
        return;
      }
      res.writeHead(up.statusCode, endToEnd(up.headers) as OutgoingHttpHeaders);
      relay(up.body, res);
    },
    (err: Error) => badGateway(res, err),
  );
}

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
  if (req.url === '/healthz') {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': HEALTH.length });
    res.end(HEALTH);
    return;
  }
  proxy(req, res);
});
// A client that resets its connection must not end the process (Node emits these on the server).
server.on('clientError', (_err, socket) => socket.destroy());

server.listen(port, '127.0.0.1', () => process.stdout.write(`READY ${port}\n`));

const stop = (): void => {
  server.close();
  server.closeAllConnections();
  void agent.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 1_000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
