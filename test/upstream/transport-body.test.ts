/**
 * The transport's answer body (UpstreamBody over undici's dispatcher) against a real loopback server:
 * read whole or chunk by chunk, with backpressure, dropped mid-way, aborted before and after the headers,
 * and the pooled connection given back in every case.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../../core/upstream/transport.ts';
import { MAX_WHOLE_BODY_BYTES } from '../../core/upstream/upstream-body.ts';
import type { UpstreamRequest } from '../../core/providers/types.ts';

const TIMEOUTS = { connectMs: 2_000, headersMs: 5_000, idleMs: 5_000 };
const MIB = 1024 * 1024;

type Route = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Route>();
const closed: string[] = [];
let server: Server;
let base = '';
const transport = new Transport(2_000, { connections: 4, queueTimeoutMs: 2_000 });

const get = (path: string): UpstreamRequest => ({ method: 'GET', url: `${base}${path}`, headers: {} }) as UpstreamRequest;
const active = (): number => Object.values(transport.poolStats()).reduce((n, s) => n + s.active, 0);
const until = async (what: () => boolean, ms = 3_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

beforeAll(async () => {
  server = createServer((req, res) => {
    res.on('close', () => closed.push(req.url ?? ''));
    (routes.get(req.url ?? '') ?? ((_q, s) => s.writeHead(404).end()))(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await transport.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('the transport answer body', () => {
  it('reads a chunked body whole, as text', async () => {
    const parts = Array.from({ length: 50 }, (_, i) => `data: {"i":${i},"w":"é✓"}\n\n`);
    routes.set('/sse', (_q, s) => {
      s.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const p of parts) s.write(p);
      s.end();
    });
    const res = await transport.send(get('/sse'), TIMEOUTS);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(await res.body.text()).toBe(parts.join(''));
    expect(res.body.destroyed).toBe(true);
    await until(() => active() === 0);
  });

  it('hands a reader every chunk of one upstream read at once, and the end after them', async () => {
    const events = Array.from({ length: 40 }, (_, i) => `data: ${i}\n\n`);
    // One write of the whole chunked answer: its 40 chunks arrive in one read.
    const raw = createNetServer((socket) => {
      socket.once('data', () => {
        const chunked = events.map((e) => `${Buffer.byteLength(e).toString(16)}\r\n${e}\r\n`).join('');
        socket.end(`HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${chunked}0\r\n\r\n`);
      });
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/burst`;
      const res = await transport.send({ method: 'GET', url, headers: {} } as UpstreamRequest, TIMEOUTS);
      const seen: string[] = [];
      for await (const chunk of res.body) seen.push(chunk.toString());
      expect(seen.join('')).toBe(events.join(''));
      expect(seen.length).toBeLessThan(5);
      await until(() => active() === 0);
    } finally {
      await new Promise((r) => raw.close(r));
    }
  });

  it('pauses the connection while the reader lags, and loses nothing', async () => {
    let written = 0;
    let done = false;
    routes.set('/big', (_q, s) => {
      s.writeHead(200, { 'content-type': 'application/octet-stream' });
      const block = Buffer.alloc(64 * 1024, 7);
      const pump = (): void => {
        while (written < 16 * MIB) {
          written += block.length;
          if (!s.write(block)) return void s.once('drain', pump);
        }
        done = true;
        s.end();
      };
      pump();
    });
    const res = await transport.send(get('/big'), TIMEOUTS);
    const it = res.body[Symbol.asyncIterator]();
    await new Promise((r) => setTimeout(r, 300));
    // Unread, the body stops the socket: the server cannot have pushed all 16 MiB through it.
    expect(done).toBe(false);
    let total = 0;
    for (let r = await it.next(); !r.done; r = await it.next()) total += r.value.length;
    expect(total).toBe(16 * MIB);
    await until(() => active() === 0);
  });

  it('drops an unfinished body: the server sees its connection cut, the pool gets its slot back', async () => {
    routes.set('/endless', (_q, s) => {
      s.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => s.write('data: tick\n\n'), 5);
      s.on('close', () => clearInterval(timer));
    });
    const res = await transport.send(get('/endless'), TIMEOUTS);
    const it = res.body[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    res.body.destroy();
    expect(res.body.destroyed).toBe(true);
    expect((await it.next()).done).toBe(true);
    await until(() => closed.includes('/endless'));
    await until(() => active() === 0);
  });

  it('an abort before the headers fails the send; after them, the read', async () => {
    routes.set('/slow-headers', (_q, s) => {
      setTimeout(() => s.writeHead(200).end('late'), 2_000).unref();
    });
    const early = new AbortController();
    const pending = transport.send(get('/slow-headers'), TIMEOUTS, early.signal);
    setTimeout(() => early.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'TransportError' });
    await until(() => active() === 0);

    routes.set('/slow-body', (_q, s) => {
      s.writeHead(200, { 'content-type': 'text/plain' });
      s.write('first');
      setTimeout(() => s.end('last'), 2_000).unref();
    });
    const late = new AbortController();
    const res = await transport.send(get('/slow-body'), TIMEOUTS, late.signal);
    const it = res.body[Symbol.asyncIterator]();
    expect((await it.next()).value?.toString()).toBe('first');
    setTimeout(() => late.abort(), 50);
    await expect(it.next()).rejects.toBeTruthy();
    await until(() => closed.includes('/slow-body'));
    await until(() => active() === 0);
  });

  it('a body that goes silent past the idle timeout fails the read with undici\'s body timeout', async () => {
    routes.set('/silent', (_q, s) => {
      s.writeHead(200, { 'content-type': 'text/plain' });
      s.write('some');
    });
    const res = await transport.send(get('/silent'), { ...TIMEOUTS, idleMs: 1_200 });
    await expect(res.body.text()).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
    await until(() => active() === 0);
  });

  it('refuses a body read whole past its cap (a provider failure), drops the connection, and holds no more of it', async () => {
    const chunk = Buffer.alloc(4 * MIB, 0x61);
    let sent = 0;
    routes.set('/huge', (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const more = (): void => {
        while (sent < MAX_WHOLE_BODY_BYTES + 8 * MIB) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    const res = await transport.send(get('/huge'), TIMEOUTS);
    await expect(res.body.text()).rejects.toMatchObject({ code: 'GATEWAY_UPSTREAM_TOO_LARGE' });
    await until(() => active() === 0);
    expect(res.body.destroyed).toBe(true);
  });
});
