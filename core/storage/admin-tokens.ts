/**
 * Admin tokens per person, for a gateway several people administer (a team's shared one): each has a
 * name, is shown once, and is stored as its SHA-256 hash only. Both stores keep them in their shared
 * state (SQLite here, PostgreSQL in team mode), so every instance honours a token the moment it exists
 * and refuses it the moment it is revoked. The data home's `admin-token` file keeps working beside them.
 */
import { hashLocalKey, randomBase62 } from '../keys/local-key.ts';
import { StorageError } from './db.ts';

/** Distinct from the file token's `gwadm-` (base64url), so a log or a support question can tell them apart. */
export const ADMIN_TOKEN_PREFIX = 'gwadm-p-';

export interface AdminTokenInfo {
  name: string;
  /** The first characters, for telling tokens apart in a list. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface IssuedAdminToken {
  token: AdminTokenInfo;
  /** Shown once; never stored. */
  secret: string;
}

export interface AdminTokenRow {
  name: string;
  hash: string;
  prefix: string;
  created_at: number | string;
  revoked_at: number | string | null;
}

export const generateAdminToken = (): string => `${ADMIN_TOKEN_PREFIX}${randomBase62(40)}`;
/** The digest local keys are stored by (hex SHA-256 of the whole secret). */
export const hashAdminToken = (secret: string): string => hashLocalKey(secret);
export const looksLikeAdminToken = (s: string | null): s is string => s?.startsWith(ADMIN_TOKEN_PREFIX) === true && s.length > ADMIN_TOKEN_PREFIX.length + 20;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** A person's name as it appears in log lines: letters, digits and `._@-`, 64 at most. */
export function checkAdminName(name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new StorageError('invalid_input', 'an admin token name is 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit');
  }
  // Log lines call whoever used the data home's file `admin-token`: a person may not take that name.
  if (name === 'admin-token') throw new StorageError('invalid_input', 'the name "admin-token" stands for the data home\'s admin-token file in log lines; pick another');
  return name;
}

/** A new token for a person: the row both stores insert and the secret to show once. */
export function newAdminToken(name: string): { row: AdminTokenRow; secret: string } {
  const checked = checkAdminName(name);
  const secret = generateAdminToken();
  return { row: { name: checked, hash: hashAdminToken(secret), prefix: secret.slice(0, 12), created_at: Date.now(), revoked_at: null }, secret };
}

export function toAdminToken(row: AdminTokenRow): AdminTokenInfo {
  return {
    name: row.name,
    prefix: row.prefix,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

export const adminTokenExists = (name: string): StorageError => new StorageError('admin_token_exists', `an admin token named "${name}" already exists (revoke it first)`);
export const adminTokenNotFound = (name: string): StorageError => new StorageError('admin_token_not_found', `no active admin token named "${name}"`);
