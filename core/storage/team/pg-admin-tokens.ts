/** Admin tokens per person in PostgreSQL, shared by every instance of a team (see ../admin-tokens.ts). */
import type { AdminTokensStore } from '../../state/gateway-state.ts';
import {
  adminTokenExists,
  adminTokenNotFound,
  hashAdminToken,
  newAdminToken,
  toAdminToken,
  type AdminTokenInfo,
  type AdminTokenRow,
  type IssuedAdminToken,
} from '../admin-tokens.ts';
import type { Pool } from './pg-pool.ts';

const UNIQUE_VIOLATION = '23505';

export class PgAdminTokens implements AdminTokensStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async create(name: string): Promise<IssuedAdminToken> {
    const { row, secret } = newAdminToken(name);
    try {
      await this.#pool.query(`INSERT INTO admin_tokens (name, hash, prefix, created_at) VALUES ($1, $2, $3, $4)`, [row.name, row.hash, row.prefix, row.created_at]);
    } catch (err) {
      if ((err as { code?: string })?.code === UNIQUE_VIOLATION) throw adminTokenExists(row.name);
      throw err;
    }
    return { token: toAdminToken(row), secret };
  }

  async list(options: { includeRevoked?: boolean } = {}): Promise<AdminTokenInfo[]> {
    const where = options.includeRevoked ? '' : 'WHERE revoked_at IS NULL';
    return (await this.#pool.query<AdminTokenRow>(`SELECT * FROM admin_tokens ${where} ORDER BY created_at, name`)).rows.map(toAdminToken);
  }

  async revoke(name: string): Promise<AdminTokenInfo> {
    const r = await this.#pool.query<AdminTokenRow>(`UPDATE admin_tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL RETURNING *`, [Date.now(), name]);
    if (r.rows.length === 0) throw adminTokenNotFound(name);
    return toAdminToken(r.rows[0]);
  }

  async holderOf(secret: string): Promise<AdminTokenInfo | null> {
    const r = await this.#pool.query<AdminTokenRow>(`SELECT * FROM admin_tokens WHERE hash = $1 AND revoked_at IS NULL`, [hashAdminToken(secret)]);
    return r.rows.length > 0 ? toAdminToken(r.rows[0]) : null;
  }
}
