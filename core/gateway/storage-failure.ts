/**
 * A failure of the SQLite file while the gateway runs (disk full, read-only, I/O error, damage, a lock
 * held too long) is not a bug of ours and not the client's mistake: the client gets a 503 in its
 * protocol's envelope whose message names the database file and what to do, and the log says the same
 * (once per kind every 10 s, so a full disk does not flood it). Only a lock held too long is worth an
 * automatic retry; the others need someone to act, so they carry `x-should-retry: false`.
 */
import { GatewayError } from '../errors.ts';
import { StorageError, storageErrorFor } from '../storage/db.ts';
import type { StorageErrorCode } from '../storage/db.ts';
import type { GatewayState } from '../state/gateway-state.ts';

const RUNTIME_CODES: ReadonlySet<StorageErrorCode> = new Set(['database_full', 'database_readonly', 'database_io', 'database_corrupt', 'database_busy', 'database_unreadable']);
const LOG_EVERY_MS = 10_000;
const lastLogged = new Map<string, number>();

/** The store a failure is told against: its location, and (a team's) which of its servers an error says is down. */
export type FailingStore = Pick<GatewayState, 'location' | 'unreachable'>;

/** The client's answer for a storage failure, or null when `err` is something else. */
export function storageFailure(err: unknown, store: FailingStore): GatewayError | null {
  const server = store.unreachable?.(err) ?? null;
  if (server !== null) return unreachable(server, err);
  const described = storageErrorFor(err, store.location);
  if (!(described instanceof StorageError) || !RUNTIME_CODES.has(described.code)) return null;
  logOnce(described.code, `storage failure (${described.code}): ${described.message}`);
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: described.code,
    message: `The gateway's database failed: ${described.message}`,
    retryable: described.code === 'database_busy' ? undefined : false,
  });
}

/**
 * A team's PostgreSQL or Redis that cannot be reached: a 503 naming it. Calls that need it fail until it is back
 * (a restart is the usual cause), so a client may retry later; the others are served as before.
 */
function unreachable(server: string, err: unknown): GatewayError {
  // The first sentence: a dot followed by a space or the end (an address's dots stay: "ECONNREFUSED 127.0.0.1:5432").
  const why = (err instanceof Error ? err.message : String(err)).split(/\.(?:\s|$)/)[0].slice(0, 200);
  logOnce(`unreachable ${server}`, `cannot reach ${server}: ${why}`);
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'state_unreachable',
    message: `The gateway cannot reach its ${server} (${why}); this call needs it. Try again shortly; if this persists, the gateway's operator must bring that server back.`,
    headers: { 'retry-after': '5' },
  });
}

/** Logs once per kind every 10 s, so a full disk or a server down does not flood the log. */
function logOnce(kind: string, line: string): void {
  const now = Date.now();
  if (now - (lastLogged.get(kind) ?? 0) < LOG_EVERY_MS) return;
  lastLogged.set(kind, now);
  console.error(`[gateway] ${line}`);
}
