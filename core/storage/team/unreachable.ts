/**
 * Whether an error from the pg or ioredis client means a team's server cannot be reached (stopped,
 * restarting, refusing connections), and which one, for a 503 that names it instead of a 500 "internal
 * error": the client should come back later, and the operator needs to know which server to look at.
 */
import { redact } from '../../state/team-urls.ts';
import type { TeamUrls } from '../../state/team-urls.ts';

/** SQLSTATE: connection exceptions (class 08), shutdown and "cannot connect now" (57P01-57P03), too many connections. */
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/** pg's own words when its connection ends or cannot be made in time. */
const PG_CONNECTION_LOST = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended)/;
const NET_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/** `Redis at redis://host:port` or `PostgreSQL at postgres://...` (password hidden), or null for any other error. */
export function unreachableServer(err: unknown, urls: TeamUrls): string | null {
  if (!(err instanceof Error)) return null;
  const e = err as Error & { code?: unknown; port?: unknown };
  // ioredis: a command that waited through its retries, or one sent on a connection that has ended.
  if (e.name === 'MaxRetriesPerRequestError' || e.message === 'Connection is closed.') return `Redis at ${redact(urls.redis)}`;
  // A plain network error names its port: Redis's, or else it came from the pg client.
  if (typeof e.code === 'string' && NET_CODES.has(e.code) && e.port !== undefined && String(e.port) === portOf(urls.redis)) return `Redis at ${redact(urls.redis)}`;
  return isPgConnectionFailure(err) ? `PostgreSQL at ${redact(urls.database)}` : null;
}

/** Whether a pg error means the connection to PostgreSQL failed or was lost (not that it refused a statement). */
export function isPgConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (PG_UNAVAILABLE.test(code) || NET_CODES.has(code))) return true;
  return PG_CONNECTION_LOST.test(err.message);
}

function portOf(url: string): string {
  try {
    return new URL(url).port || '6379';
  } catch {
    return '';
  }
}
