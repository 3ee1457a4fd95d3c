/** Writing responses: JSON with the right Content-Type, and the one error envelope. */
import type { ServerResponse } from 'node:http';
import { GatewayError, internalError } from '../errors.ts';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown, headers: Record<string, string> = {}): GatewayError {
  const ge = err instanceof GatewayError ? err : internalError();
  if (!(err instanceof GatewayError)) console.error('[gateway] internal error:', err instanceof Error ? err.stack : err);
  if (res.headersSent) {
    res.destroy();
    return ge;
  }
  sendJson(res, ge.status, ge.toBody(), { ...headers, ...ge.responseHeaders() });
  return ge;
}
