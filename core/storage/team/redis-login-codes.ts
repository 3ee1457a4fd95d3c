/**
 * A team's dashboard sign-in (see core/admin/login-codes.ts) kept in Redis, so a code issued by one instance
 * can be traded on another and a session is honoured by every instance: behind a load balancer the page's
 * requests land on any of them. Keys hold the SHA-256 of the code or session, never the secret itself, and
 * expire with it; a code is spent with GETDEL, so it works once across the whole team.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ADMIN_FILE_HOLDER, CODE_TTL_MS, SESSION_TTL_MS, codeExpiry, newLoginCode, newSessionToken } from '../../admin/login-codes.ts';
import type { LoginStore } from '../../admin/login-codes.ts';

const CODE_PREFIX = 'gw:login:code:';
const SESSION_PREFIX = 'gw:login:session:';
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export class RedisLoginCodes implements LoginStore {
  readonly #redis: Redis;
  readonly #onError: (err: unknown) => void;

  constructor(redis: Redis, onError: (err: unknown) => void = (e) => process.emitWarning(`sign-in code not stored: ${String(e)}`)) {
    this.#redis = redis;
    this.#onError = onError;
  }

  /**
   * Synchronous, as one machine's is (`gateway start` prints its link at once): the code is stored in the same
   * breath, and a command sent later on this connection (its exchange here) runs after it.
   */
  issue(ttlMs: number = CODE_TTL_MS, holder: string = ADMIN_FILE_HOLDER): { code: string; expiresAt: number; stored: Promise<unknown> } {
    const code = newLoginCode();
    const expiresAt = codeExpiry(Date.now(), ttlMs);
    const stored = this.#redis.set(CODE_PREFIX + sha256(code), holder, 'PX', Math.max(1, expiresAt - Date.now()));
    stored.catch(this.#onError);
    return { code, expiresAt, stored };
  }

  async exchange(code: string): Promise<{ session: string; expiresAt: number } | null> {
    const holder = await this.#redis.getdel(CODE_PREFIX + sha256(code));
    if (holder === null) return null;
    const session = newSessionToken();
    await this.#redis.set(SESSION_PREFIX + sha256(session), holder, 'PX', SESSION_TTL_MS);
    return { session, expiresAt: Date.now() + SESSION_TTL_MS };
  }

  async sessionHolder(token: string | null): Promise<string | null> {
    if (!token || !token.startsWith('gwsess-')) return null;
    return this.#redis.get(SESSION_PREFIX + sha256(token));
  }

  async end(token: string): Promise<void> {
    if (token.startsWith('gwsess-')) await this.#redis.del(SESSION_PREFIX + sha256(token));
  }
}
