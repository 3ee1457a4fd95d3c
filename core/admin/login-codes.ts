/**
 * One-click sign-in for the dashboard page. Whoever holds the admin token (the CLI's `gateway ui`,
 * `gateway start`, the tray) asks for a one-time code; the browser opens `/ui/#login=CODE` (a fragment,
 * so the code never reaches a server log or a Referer) and trades the code for a session token. A code
 * works once and for a minute (at most 15 if asked); a session lasts a working day. On one machine codes and
 * sessions live in this process (`LoginCodes`); a team's live in Redis (core/storage/team/redis-login-codes.ts),
 * so a dashboard behind a load balancer stays signed in whichever instance answers.
 */
import { randomBytes } from 'node:crypto';
import { tokenMatches } from '../gateway/admin-token.ts';
import type { Awaitable } from '../state/awaitable.ts';

/** How admin action lines name whoever used the data home's `admin-token` file (its owner on this machine). */
export const ADMIN_FILE_HOLDER = 'admin-token';

export const CODE_TTL_MS = 60_000;
/** The longest a code may live: `gateway start` prints one that should still work when clicked a little later. */
export const MAX_CODE_TTL_MS = 15 * 60_000;
export const SESSION_TTL_MS = 12 * 3_600_000;
const MAX_LIVE = 1000;

/** Where sign-in codes and sessions are kept. */
export interface LoginStore {
  /**
   * A one-time code for `holder`, valid `ttlMs` (a minute by default, at most 15). `stored`, where the code is kept
   * elsewhere (a team's Redis): settles once it is, and fails when it could not be (the code would not work).
   */
  issue(ttlMs?: number, holder?: string): { code: string; expiresAt: number; stored?: Promise<unknown> };
  /** The session token for a live, unused code (which is then spent, wherever it is tried next), or null. */
  exchange(code: string): Awaitable<{ session: string; expiresAt: number } | null>;
  /** Who a live session belongs to (the holder of the token that asked for its code), or null. */
  sessionHolder(token: string | null): Awaitable<string | null>;
  /** Ends a session (the dashboard's Sign out): its token is refused from then on, on every instance. */
  end(token: string): Awaitable<void>;
}

/** The page path that signs in with a code: a fragment, so the code reaches neither logs nor Referer. */
export const loginPath = (code: string): string => `/ui/#login=${encodeURIComponent(code)}`;

export const newLoginCode = (): string => `gwcode-${randomBytes(18).toString('base64url')}`;
export const newSessionToken = (): string => `gwsess-${randomBytes(24).toString('base64url')}`;
export const codeExpiry = (now: number, ttlMs: number): number => now + Math.max(1_000, Math.min(MAX_CODE_TTL_MS, ttlMs));

export class LoginCodes implements LoginStore {
  /** Code or session → when it expires, and who asked for it (a person's admin token name, or the file's). */
  private readonly codes = new Map<string, { expiresAt: number; holder: string }>();
  private readonly sessions = new Map<string, { expiresAt: number; holder: string }>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  issue(ttlMs: number = CODE_TTL_MS, holder: string = ADMIN_FILE_HOLDER): { code: string; expiresAt: number } {
    this.prune();
    const code = newLoginCode();
    const expiresAt = codeExpiry(this.now(), ttlMs);
    this.codes.set(code, { expiresAt, holder });
    return { code, expiresAt };
  }

  /** The session token for a live, unused code (which is then spent), or null. */
  exchange(code: string): { session: string; expiresAt: number } | null {
    this.prune();
    const issued = this.codes.get(code);
    // Spent whatever happens next: a code is tried once.
    this.codes.delete(code);
    if (issued === undefined || issued.expiresAt <= this.now()) return null;
    const session = newSessionToken();
    const expiresAt = this.now() + SESSION_TTL_MS;
    this.sessions.set(session, { expiresAt, holder: issued.holder });
    return { session, expiresAt };
  }

  isSession(token: string | null): boolean {
    return this.sessionHolder(token) !== null;
  }

  sessionHolder(token: string | null): string | null {
    if (!token || !token.startsWith('gwsess-')) return null;
    for (const [s, session] of this.sessions) {
      if (tokenMatches(token, s)) return session.expiresAt > this.now() ? session.holder : null;
    }
    return null;
  }

  end(token: string): void {
    for (const s of this.sessions.keys()) if (tokenMatches(token, s)) this.sessions.delete(s);
  }

  private prune(): void {
    const t = this.now();
    for (const [c, e] of this.codes) if (e.expiresAt <= t) this.codes.delete(c);
    for (const [s, e] of this.sessions) if (e.expiresAt <= t) this.sessions.delete(s);
    // Bounded whatever a caller does: the oldest go first.
    while (this.codes.size > MAX_LIVE) this.codes.delete(this.codes.keys().next().value as string);
    while (this.sessions.size > MAX_LIVE) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}
