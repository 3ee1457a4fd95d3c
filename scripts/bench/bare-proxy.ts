/**
 * The floor: a bare pass-through proxy. A `node:http` server forwards each request (method, path,
 * end-to-end headers, streamed body) with `undici.request` over a keep-alive Agent, and pipes the
 * upstream's status, headers and body back. No parsing, no auth, no accounting.
 *
 * Run as a child: `node bare-proxy.ts --port N --target http://127.0.0.1:U`; `GET /healthz` answers 200.
 */
import { createServer } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream';
import { Agent, request } from 'undici';
import { endToEnd, proxyArgs } from './proxy-args.ts';

const { port, target } = proxyArgs();

// The same pool shape as the gateway's Transport, so the comparison is about the work per request.
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 128, pipelining: 1 });

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
  if (req.url === '/healthz') {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
    res.end('{"ok":true}');
    return;
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  request(target + (req.url ?? '/'), {
    dispatcher: agent,
    method: (req.method ?? 'GET') as 'GET',
    headers: endToEnd(req.headers),
    body: hasBody ? req : undefined,
    headersTimeout: 600_000,
    bodyTimeout: 60_000,
  }).then(
    (up) => {
      res.writeHead(up.statusCode, endToEnd(up.headers) as OutgoingHttpHeaders);
      pipeline(up.body, res, () => undefined);
    },
    (err: Error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const body = JSON.stringify({ error: { message: `bare proxy: ${err.message}`, type: 'api_error', param: null, code: 'upstream_error' } });
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
  );
});

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
