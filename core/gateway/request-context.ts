/** Per-request state shared by the handlers: identity, the audit record and client-abort tracking. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StoredKey } from '../storage/keys-repo.ts';
import type { CallAbort } from './call-abort.ts';
import type { CallRecord } from './call-record.ts';
import type { GatewayDeps } from './deps.ts';
import type { QueueWaitReporter } from '../upstream/queue-wait.ts';

export interface RequestContext {
  deps: GatewayDeps;
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  key: StoredKey;
  record: CallRecord;
  /** Aborted when the client closes the connection before we finished; cancels upstream work. */
  abort: CallAbort;
  /** Headers every response to this key carries (rate-limit state). */
  baseHeaders: Record<string, string>;
  /** The client's JSON body as sent, forwarded as-is to an upstream when no rewrite applies. */
  bodyText?: string;
  /** The same body as the bytes the client sent. */
  bodyBytes?: Buffer;
  /** Set when a stopping gateway cut this call (the abort is ours, not the client's). */
  cut?: boolean;
  /** Where InflightCalls holds this call while it runs. */
  inflightSlot?: number;
  /** Told when an upstream call waited for a pooled connection. */
  onQueued?: QueueWaitReporter;
}

export const clientGone = (ctx: RequestContext): boolean => ctx.abort.signal.aborted;
