/** Admin tokens per person in SQLite (see admin-tokens.ts for what they are). */
import type BetterSqlite3 from 'better-sqlite3';
import type { AdminTokensStore } from '../state/gateway-state.ts';
import {
  adminTokenExists,
  adminTokenNotFound,
  hashAdminToken,
  newAdminToken,
  toAdminToken,
  type AdminTokenInfo,
  type AdminTokenRow,
  type IssuedAdminToken,
} from './admin-tokens.ts';
import type { Database } from './db.ts';

const isUniqueViolation = (err: unknown): boolean => (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE';

export class AdminTokensRepo implements AdminTokensStore {
  private readonly db: Database;
  private readonly byHash: BetterSqlite3.Statement<[string], AdminTokenRow>;

  constructor(db: Database) {
    this.db = db;
    this.byHash = db.prepare(`SELECT * FROM admin_tokens WHERE hash = ? AND revoked_at IS NULL`);
  }

  create(name: string): IssuedAdminToken {
    const { row, secret } = newAdminToken(name);
    try {
      this.db.prepare(`INSERT INTO admin_tokens (name, hash, prefix, created_at) VALUES (?, ?, ?, ?)`).run(row.name, row.hash, row.prefix, row.created_at);
    } catch (err) {
      if (isUniqueViolation(err)) throw adminTokenExists(row.name);
      throw err;
    }
    return { token: toAdminToken(row), secret };
  }

  list(options: { includeRevoked?: boolean } = {}): AdminTokenInfo[] {
    const where = options.includeRevoked ? '' : 'WHERE revoked_at IS NULL';
    return this.db.prepare<[], AdminTokenRow>(`SELECT * FROM admin_tokens ${where} ORDER BY created_at, rowid`).all().map(toAdminToken);
  }

  revoke(name: string): AdminTokenInfo {
    const row = this.db.prepare<[number, string], AdminTokenRow>(`UPDATE admin_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL RETURNING *`).get(Date.now(), name);
    if (!row) throw adminTokenNotFound(name);
    return toAdminToken(row);
  }

  holderOf(secret: string): AdminTokenInfo | null {
    const row = this.byHash.get(hashAdminToken(secret));
    return row ? toAdminToken(row) : null;
  }
}
