/**
 * The cap on concurrent client connections (`maxConnections` in settings.json). A connection accepted
 * over the cap is still read as HTTP, so its request gets a clear answer in the OpenAI envelope: 503
 * `too_many_connections` with `retry-after: 1` and `connection: close` (the SDKs retry a 503 after a
 * back-off), and the connection closes. One that sends nothing is closed after a few seconds. Past a
 * hard bound (the cap plus a margin for those answers) Node itself drops new sockets unanswered, so a
 * flood cannot exhaust file descriptors.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../errors.ts';

/** Sockets over the cap that may still be answered before Node drops new ones outright. */
export const OVER_CAP_MARGIN = 256;
/** How long a connection over the cap may stay silent before it is closed. */
export const OVER_CAP_IDLE_MS = 5_000;

export interface ConnectionCap {
  /** Whether this request arrived on a connection accepted over the cap. */
  refuses(req: IncomingMessage): boolean;
  /** Client connections open now. */
  open(): number;
}

export function capConnections(server: Server, maxConnections: number): ConnectionCap {
  let open = 0;
  const over = new WeakSet<Socket>();
  server.maxConnections = maxConnections + OVER_CAP_MARGIN;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
    if (open <= maxConnections) return;
    over.add(socket);
    const timer = setTimeout(() => socket.destroy(), OVER_CAP_IDLE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
  return { refuses: (req) => over.has(req.socket), open: () => open };
}

export function tooManyConnections(maxConnections: number): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'too_many_connections',
    message: `The gateway has ${maxConnections} client connections open, its limit (maxConnections in settings.json); retry in a moment, or reuse connections (keep-alive).`,
  });
}
