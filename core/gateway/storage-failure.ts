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

const RUNTIME_CODES: ReadonlySet<StorageErrorCode> = new Set(['database_full', 'database_readonly', 'database_io', 'database_corrupt', 'database_busy', 'database_unreadable']);
const LOG_EVERY_MS = 10_000;
const lastLogged = new Map<string, number>();

/** The client's answer for a storage failure, or null when `err` is something else. */
export function storageFailure(err: unknown, file: string): GatewayError | null {
  const described = storageErrorFor(err, file);
  if (!(described instanceof StorageError) || !RUNTIME_CODES.has(described.code)) return null;
  const now = Date.now();
  if (now - (lastLogged.get(described.code) ?? 0) >= LOG_EVERY_MS) {
    lastLogged.set(described.code, now);
    console.error(`[gateway] storage failure (${described.code}): ${described.message}`);
  }
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: described.code,
    message: `The gateway's database failed: ${described.message}`,
    retryable: described.code === 'database_busy' ? undefined : false,
  });
}
