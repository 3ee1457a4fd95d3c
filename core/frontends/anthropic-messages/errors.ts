/**
 * Anthropic's error envelope: `{"type":"error","error":{"type","message"},"request_id"}` with the
 * status/type pairs its SDKs expect. When every provider is overloaded or unreachable (or the gateway is
 * busy) the client hears 529 `overloaded_error`, which Claude Code and the SDKs retry with backoff. Any other
 * provider failure (a 500, a key the provider refused) stays a 502 `api_error` with the gateway's message:
 * as 529, Claude Code told the user the service was overloaded when a key was wrong. An Anthropic upstream's own
 * client error goes back verbatim: Claude Code's recovery (dropping thinking, signatures) reads its wording.
 */
import type { GatewayError } from '../../errors.ts';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export function errorType(err: GatewayError): { status: number; type: string } {
  // A 503 a retry may mend (busy, stopping, a team server restarting) is Anthropic's overload; one that needs its
  // operator (a full or broken database) stays a 503, which the SDK and Claude Code do not read as "overloaded".
  const status = (err.status === 503 && err.retryable !== false) || (err.status === 502 && err.overloaded) ? 529 : err.status;
  return { status, type: TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error') };
}

export function anthropicErrorResponse(err: GatewayError, requestId: string): { status: number; headers: Record<string, string>; body: string } {
  const headers = { ...err.responseHeaders(), 'request-id': requestId };
  const upstream = err.upstream;
  if (upstream && upstream.protocol === 'anthropic-messages') return { status: upstream.status, headers, body: upstream.body };
  const { status, type } = errorType(err);
  return { status, headers, body: JSON.stringify({ type: 'error', error: { type, message: err.message }, request_id: requestId }) };
}
