/**
 * Local keys in SQLite. Only the SHA-256 hash and a 10-character display prefix of a secret are
 * stored; the secret is returned once by `create`/`rotate`. Deleting keeps the row (the audit trail
 * points at it) and frees the name for a new key.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { displayPrefix, generateLocalKey, hashLocalKey, randomBase62 } from '../keys/local-key.ts';
import { changeConfig } from './config-version.ts';
import { StorageError, type Database } from './db.ts';

export const KEY_STATES = ['active', 'disabled', 'deleted'] as const;
export type KeyState = (typeof KEY_STATES)[number];
export const BUDGET_PERIODS = ['total', 'daily', 'monthly'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface StoredKey {
  id: string;
  name: string;
  /** Hex SHA-256 of the secret; requests are authenticated by hashing their bearer token and matching this. */
  hash: string;
  /** The secret's first 10 characters (`sk-gw-AbCd`), to tell keys apart in lists. */
  prefix: string;
  state: KeyState;
  createdAt: number;
  rotatedAt: number | null;
  deletedAt: number | null;
  budgetUsd: number | null;
  budgetPeriod: BudgetPeriod | null;
  rpm: number | null;
  tpm: number | null;
  /** Model allow-list; null allows every model. */
  models: string[] | null;
  /** This key's own cassette (`MODE:DIR`, see core/cassettes/mode.ts), or null for the gateway's setting. */
  cassette: string | null;
}

/** What a key's name may be, wherever it is given (CLI, admin API, dashboard): it is printed in tables, logs and CSV. */
export const KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const KEY_NAME_RULE = 'must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit';

export interface KeyLimits {
  budgetUsd?: number | null;
  /** Defaults to `total` when a budget is given without one. */
  budgetPeriod?: BudgetPeriod | null;
  rpm?: number | null;
  tpm?: number | null;
  models?: string[] | null;
}

export interface NewKey extends KeyLimits {
  name: string;
  /** The key's own cassette (`MODE:DIR`), set with the key so a running gateway never sees it without. */
  cassette?: string | null;
}

/** Fields left undefined are unchanged; null clears a limit. Clearing the budget clears its period. */
export interface KeyPatch extends KeyLimits {
  name?: string;
}

export interface IssuedKey {
  key: StoredKey;
  /** The full secret: shown to the user once, never stored. */
  secret: string;
}

export interface KeyRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  state: KeyState;
  created_at: number;
  rotated_at: number | null;
  deleted_at: number | null;
  budget_usd: number | null;
  budget_period: BudgetPeriod | null;
  rpm: number | null;
  tpm: number | null;
  models: string | null;
  cassette?: string | null;
}

type LimitColumns = Pick<KeyRow, 'budget_usd' | 'budget_period' | 'rpm' | 'tpm' | 'models'>;

const MAX_NAME_LENGTH = 64;

export class KeysRepo {
  private readonly db: Database;
  private readonly byLiveName: BetterSqlite3.Statement<[string], KeyRow>;
  private readonly byHash: BetterSqlite3.Statement<[string], KeyRow>;
  private readonly byId: BetterSqlite3.Statement<[string], KeyRow>;
  private readonly listLive: BetterSqlite3.Statement<[], KeyRow>;
  private readonly listAll: BetterSqlite3.Statement<[], KeyRow>;

  constructor(db: Database) {
    this.db = db;
    this.byLiveName = db.prepare(`SELECT * FROM keys WHERE name = ? AND state <> 'deleted'`);
    this.byHash = db.prepare(`SELECT * FROM keys WHERE hash = ?`);
    this.byId = db.prepare(`SELECT * FROM keys WHERE id = ?`);
    this.listLive = db.prepare(`SELECT * FROM keys WHERE state <> 'deleted' ORDER BY created_at, rowid`);
    this.listAll = db.prepare(`SELECT * FROM keys ORDER BY created_at, rowid`);
  }

  create(input: NewKey): IssuedKey {
    const name = checkName(input.name);
    const limits = limitColumns(input, null);
    const secret = generateLocalKey();
    const id = `key_${randomBase62(16)}`;
    return changeConfig(this.db, () => {
      if (this.byLiveName.get(name) !== undefined) {
        throw new StorageError('key_exists', `a key named "${name}" already exists`);
      }
      this.db
        .prepare(
          `INSERT INTO keys (id, name, hash, prefix, state, created_at, budget_usd, budget_period, rpm, tpm, models, cassette)
           VALUES (@id, @name, @hash, @prefix, 'active', @created_at, @budget_usd, @budget_period, @rpm, @tpm, @models, @cassette)`,
        )
        .run({ id, name, hash: hashLocalKey(secret), prefix: displayPrefix(secret), created_at: Date.now(), ...limits, cassette: checkCassette(input.cassette ?? null) });
      return { key: this.mustGetById(id), secret };
    });
  }

  list(options: { includeDeleted?: boolean } = {}): StoredKey[] {
    const rows = options.includeDeleted === true ? this.listAll.all() : this.listLive.all();
    return rows.map(toStoredKey);
  }

  /** The active or disabled key with this name; deleted keys are not found by name. */
  findByName(name: string): StoredKey | null {
    const row = this.byLiveName.get(name);
    return row === undefined ? null : toStoredKey(row);
  }

  /** Any key with this hash, whatever its state: the caller decides what disabled or deleted means. */
  findByHash(hash: string): StoredKey | null {
    const row = this.byHash.get(hash);
    return row === undefined ? null : toStoredKey(row);
  }

  findById(id: string): StoredKey | null {
    const row = this.byId.get(id);
    return row === undefined ? null : toStoredKey(row);
  }

  setState(name: string, state: 'active' | 'disabled'): StoredKey {
    if (state !== 'active' && state !== 'disabled') {
      throw new StorageError('invalid_input', `a key's state can be set to active or disabled, not "${String(state)}"`);
    }
    return changeConfig(this.db, () => {
      const key = this.mustFindLive(name);
      this.db.prepare(`UPDATE keys SET state = ? WHERE id = ?`).run(state, key.id);
      return this.mustGetById(key.id);
    });
  }

  /** Marks the key deleted; the row stays so past calls still name it, and the name becomes free. */
  delete(name: string): StoredKey {
    return changeConfig(this.db, () => {
      const key = this.mustFindLive(name);
      this.db.prepare(`UPDATE keys SET state = 'deleted', deleted_at = ? WHERE id = ?`).run(Date.now(), key.id);
      return this.mustGetById(key.id);
    });
  }

  /** A new secret for the same key (id, name, state, limits and history); the old secret stops working. */
  rotate(name: string): IssuedKey {
    const secret = generateLocalKey();
    return changeConfig(this.db, () => {
      const key = this.mustFindLive(name);
      this.db
        .prepare(`UPDATE keys SET hash = ?, prefix = ?, rotated_at = ? WHERE id = ?`)
        .run(hashLocalKey(secret), displayPrefix(secret), Date.now(), key.id);
      return { key: this.mustGetById(key.id), secret };
    });
  }

  update(name: string, patch: KeyPatch): StoredKey {
    return changeConfig(this.db, () => {
      const key = this.mustFindLive(name);
      const newName = patch.name === undefined ? key.name : checkName(patch.name);
      if (newName !== key.name && this.byLiveName.get(newName) !== undefined) {
        throw new StorageError('key_exists', `a key named "${newName}" already exists`);
      }
      const limits = limitColumns(patch, key);
      this.db
        .prepare(
          `UPDATE keys SET name = @name, budget_usd = @budget_usd, budget_period = @budget_period,
             rpm = @rpm, tpm = @tpm, models = @models
           WHERE id = @id`,
        )
        .run({ id: key.id, name: newName, ...limits });
      return this.mustGetById(key.id);
    });
  }

  /** Sets (or with null clears) the key's own cassette, a `MODE:DIR` spec validated by the caller. */
  setCassette(name: string, spec: string | null): StoredKey {
    const cassette = checkCassette(spec);
    return changeConfig(this.db, () => {
      const key = this.mustFindLive(name);
      this.db.prepare(`UPDATE keys SET cassette = ? WHERE id = ?`).run(cassette, key.id);
      return this.mustGetById(key.id);
    });
  }

  private mustFindLive(name: string): StoredKey {
    const key = this.findByName(name);
    if (key === null) throw new StorageError('key_not_found', `no key named "${name}"`);
    return key;
  }

  private mustGetById(id: string): StoredKey {
    const key = this.findById(id);
    if (key === null) throw new StorageError('key_not_found', `no key with id ${id}`);
    return key;
  }
}

export function checkCassette(spec: unknown): string | null {
  if (spec !== null && (typeof spec !== 'string' || spec.length === 0 || /\p{Cc}/u.test(spec))) {
    throw new StorageError('invalid_input', 'a cassette is MODE:DIR, e.g. replay:/path/to/cassettes');
  }
  return spec;
}

export function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH || name.trim() !== name || /\p{Cc}/u.test(name)) {
    throw new StorageError(
      'invalid_input',
      `a key name must be 1-${MAX_NAME_LENGTH} characters, without control characters or surrounding spaces`,
    );
  }
  return name;
}

/** Validates limits and merges them over `current` (null for a new key) into column values. */
export function limitColumns(input: KeyLimits, current: StoredKey | null): LimitColumns {
  const budgetUsd = input.budgetUsd === undefined ? (current?.budgetUsd ?? null) : input.budgetUsd;
  if (budgetUsd !== null && !(typeof budgetUsd === 'number' && Number.isFinite(budgetUsd) && budgetUsd >= 0)) {
    throw new StorageError('invalid_input', 'a budget must be a number of USD, 0 or more');
  }
  let budgetPeriod = input.budgetPeriod === undefined ? (current?.budgetPeriod ?? null) : input.budgetPeriod;
  if (budgetPeriod !== null && !BUDGET_PERIODS.includes(budgetPeriod)) {
    throw new StorageError('invalid_input', `a budget period is one of ${BUDGET_PERIODS.join(', ')}`);
  }
  if (budgetUsd === null) {
    if (input.budgetPeriod !== undefined && input.budgetPeriod !== null) {
      throw new StorageError('invalid_input', 'a budget period needs a budget');
    }
    budgetPeriod = null;
  } else {
    budgetPeriod ??= 'total';
  }
  const models = input.models === undefined ? (current?.models ?? null) : input.models;
  return {
    budget_usd: budgetUsd,
    budget_period: budgetPeriod,
    rpm: checkRate('rpm', input.rpm === undefined ? (current?.rpm ?? null) : input.rpm),
    tpm: checkRate('tpm', input.tpm === undefined ? (current?.tpm ?? null) : input.tpm),
    models: models === null ? null : JSON.stringify(checkModels(models)),
  };
}

function checkRate(label: string, value: number | null): number | null {
  if (value !== null && !(Number.isSafeInteger(value) && value > 0)) {
    throw new StorageError('invalid_input', `${label} must be a whole number above 0`);
  }
  return value;
}

function checkModels(models: unknown): string[] {
  if (!Array.isArray(models) || models.length === 0 || !models.every((m) => typeof m === 'string' && m.length > 0)) {
    throw new StorageError('invalid_input', 'a model allow-list must be a non-empty list of model names');
  }
  return [...new Set(models as string[])];
}

export function toStoredKey(row: KeyRow): StoredKey {
  return {
    id: row.id,
    name: row.name,
    hash: row.hash,
    prefix: row.prefix,
    state: row.state,
    createdAt: row.created_at,
    rotatedAt: row.rotated_at,
    deletedAt: row.deleted_at,
    budgetUsd: row.budget_usd,
    budgetPeriod: row.budget_period,
    rpm: row.rpm,
    tpm: row.tpm,
    models: row.models === null ? null : parseModels(row),
    cassette: row.cassette ?? null,
  };
}

function parseModels(row: KeyRow): string[] {
  try {
    const parsed: unknown = JSON.parse(row.models ?? 'null');
    if (Array.isArray(parsed) && parsed.every((m) => typeof m === 'string')) return parsed as string[];
  } catch {
    // fall through to the error below
  }
  throw new StorageError('corrupt_row', `key "${row.name}" has an unreadable model allow-list`);
}
