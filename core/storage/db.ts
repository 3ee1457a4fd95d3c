/**
 * Opening the one SQLite file, and the error type of the storage layer. Every connection (server or
 * CLI) is opened here so all share the same pragmas: WAL lets the CLI read while the server writes,
 * and the busy timeout makes a second writer wait instead of failing with SQLITE_BUSY.
 */
import BetterSqlite3 from 'better-sqlite3';
import { closeSync, existsSync, openSync } from 'node:fs';
import { applyMigrations, readSchemaVersion, SCHEMA_VERSION } from './migrations.ts';

export type Database = BetterSqlite3.Database;

export type StorageErrorCode =
  | 'schema_too_new'
  | 'invalid_input'
  | 'key_exists'
  | 'key_not_found'
  | 'provider_exists'
  | 'provider_not_found'
  | 'secret_in_settings'
  | 'alias_not_found'
  | 'price_not_found'
  | 'corrupt_row';

/** A misuse or refusal of the storage layer; `code` is stable so the CLI and admin API can map it. */
export class StorageError extends Error {
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string) {
    super(message);
    this.name = 'StorageError';
    this.code = code;
  }
}

export const BUSY_TIMEOUT_MS = 5000;

export function openDatabase(file: string): Database {
  const isFile = file !== ':memory:' && file !== '';
  // Create the file ourselves so it (and the -wal/-shm files SQLite derives from it) is private to the
  // user: it holds request and response bodies.
  if (isFile && !existsSync(file)) closeSync(openSync(file, 'a', 0o600));

  const db = new BetterSqlite3(file);
  try {
    // First, so the pragmas below (switching to WAL needs a brief exclusive lock) wait for other openers.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);

    const version = readSchemaVersion(db);
    if (version > SCHEMA_VERSION) {
      throw new StorageError(
        'schema_too_new',
        `${file} has schema version ${version}, but this gateway only knows up to ${SCHEMA_VERSION}: ` +
          'it was written by a newer gateway. Upgrade gateway, or set GATEWAY_HOME to another folder.',
      );
    }
    // Only takes effect before the first table exists; lets retention give disk space back (purgeCalls).
    if (version === 0) db.pragma('auto_vacuum = INCREMENTAL');

    db.pragma('journal_mode = WAL');
    // With WAL, NORMAL is durable against application crashes and far cheaper than FULL per commit.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    applyMigrations(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
