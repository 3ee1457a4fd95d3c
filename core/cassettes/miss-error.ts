/**
 * Errors the cassette layer answers itself, in the envelope of the protocol the client speaks: the
 * Anthropic one on `/v1/messages*`, OpenAI's everywhere else. A miss is a 404 with
 * `x-should-retry: false`: the official SDKs retry neither, so a test fails at once instead of after
 * a chain of backoffs.
 */
import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import { sendError } from '../gateway/respond.ts';
import { isAnthropicPath } from '../gateway/routes.ts';
import type { CanonicalRequest } from './canonical.ts';
import type { Candidate } from './store.ts';

const CASSETTE_MISS = 'cassette_miss';

export function cassetteMiss(req: CanonicalRequest, dir: string, closest: Candidate | null): GatewayError {
  const near = closest
    ? ` Closest recorded request: ${closest.file}${closest.differs.length > 0 ? ` (differs in ${closest.differs.join(', ')})` : ' (same body, all its answers used)'}.`
    : ' The cassette holds no request for this endpoint.';
  return new GatewayError({
    status: 404,
    type: 'invalid_request_error',
    code: CASSETTE_MISS,
    param: null,
    retryable: false,
    message:
      `Cassette miss: no recorded answer for POST ${req.endpoint} (model ${req.model ?? '(none)'}, request ${req.digest.slice(0, 19)}) in ${dir}. ` +
      `Replay mode never contacts a provider.${near} Record it with --record or --replay-or-record.`,
  });
}

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
};


export function sendProtocolError(res: ServerResponse, endpoint: string, err: unknown, headers: Record<string, string>): GatewayError {
  if (!isAnthropicPath(endpoint) || !(err instanceof GatewayError) || res.headersSent) return sendError(res, err, headers);
  const body = JSON.stringify({
    type: 'error',
    // Anthropic's envelope has no `code`: the reason leads the message instead.
    error: { type: ANTHROPIC_TYPES[err.status] ?? 'api_error', message: err.code ? `${err.code}: ${err.message}` : err.message },
    request_id: headers['x-request-id'] ?? null,
  });
  // Anthropic's SDKs read the request id from `request-id`.
  const requestId = headers['x-request-id'] ? { 'request-id': headers['x-request-id'] } : {};
  res.writeHead(err.status, { ...headers, ...requestId, ...err.responseHeaders(), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return err;
}
