/** One HTTP exchange with a provider, turned into an attempt outcome the failover loop understands. */
import type { ProviderAdapter, UpstreamRequest } from '../providers/types.ts';
import { TransportError } from '../upstream/transport.ts';
import type { Timeouts, UpstreamResponse } from '../upstream/transport.ts';
import type { AbortWatch } from '../upstream/abort-watch.ts';
import type { QueueWaitReporter } from '../upstream/queue-wait.ts';
import type { AttemptFailure } from './attempts.ts';
import { ClientGone } from './attempts.ts';
import type { GatewayDeps } from './deps.ts';

export type Sent = { ok: true; res: UpstreamResponse } | { ok: false; failure: AttemptFailure };

export function timeoutsFor(deps: GatewayDeps, stream: boolean): Timeouts {
  const t = deps.settings.timeouts;
  return { connectMs: t.connectMs, headersMs: stream ? t.firstByteStreamMs : t.firstByteMs, idleMs: t.idleMs };
}

/** Sends the request; an HTTP error status is read and parsed with the adapter's error parser. */
export async function sendToProvider(
  deps: GatewayDeps,
  adapter: ProviderAdapter,
  req: UpstreamRequest,
  timeouts: Timeouts,
  signal: AbortWatch,
  onQueued?: QueueWaitReporter,
): Promise<Sent> {
  let res: UpstreamResponse;
  try {
    res = await deps.transport.send(req, timeouts, signal, onQueued);
  } catch (err) {
    return transportFailure(err);
  }
  if (res.status < 400) return { ok: true, res };
  let text = '';
  try {
    text = await res.body.text();
  } catch {
    /* a reset while reading an error body: the status is enough */
  }
  return { ok: false, failure: { kind: 'http', failure: { ...adapter.parseError(res.status, text, res.headers), body: text } } };
}

export function transportFailure(err: unknown): { ok: false; failure: AttemptFailure } {
  if (err instanceof TransportError) {
    if (err.kind === 'aborted') throw new ClientGone();
    return { ok: false, failure: { kind: err.kind, message: err.message, ...(err.code === 'GATEWAY_POOL_QUEUE_TIMEOUT' ? { local: true } : {}) } };
  }
  return { ok: false, failure: { kind: 'reset', message: (err as Error)?.message ?? String(err) } };
}

/** Reads a JSON success body; a body that is not JSON is the provider's failure, not the client's. */
export async function readJsonBody(res: UpstreamResponse): Promise<{ ok: true; json: unknown; text: string } | { ok: false; failure: AttemptFailure }> {
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    return transportFailure(err);
  }
  try {
    return { ok: true, json: JSON.parse(text), text };
  } catch {
    return { ok: false, failure: { kind: 'http', failure: { status: 502, message: 'The provider answered with a body that is not JSON.', type: 'api_error', code: 'malformed_response' } } };
  }
}
