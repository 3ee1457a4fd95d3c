/**
 * Opening the one SQLite file, and the error type of the storage layer. Every connection (server or
 * CLI) is opened here so all share the same pragmas: WAL lets the CLI read while the server writes,
 * and the busy timeout makes a second writer wait instead of failing with SQLITE_BUSY.
 */
import BetterSqlite3 from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants, linkSync, openSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
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
  | 'admin_token_exists'
  | 'admin_token_not_found'
  | 'corrupt_row'
  | 'database_corrupt'
  | 'database_empty'
  | 'database_readonly'
  | 'database_unreadable'
  | 'database_full'
  | 'database_io'
  | 'database_busy';

/** A misuse or refusal of the storage layer; `code` is stable so the CLI and admin API can map it. */
export class StorageError extends Error {
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string) {
    super(message);
    this.name = 'StorageError';
    this.code = code;
  }
}

const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if absent) the database file. A file that cannot be used fails here, at once, with a
 * StorageError that names the file and says what to do: never a bare SQLite message, never a hang.
 */
export function openDatabase(file: string): Database {
  const isFile = file !== ':memory:' && file !== '';
  if (isFile) prepareFile(file);

  let db: Database;
  try {
    db = new BetterSqlite3(file);
  } catch (error) {
    throw describeFailure(error, file);
  }
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
    throw describeFailure(error, file);
  }
}

/**
 * Creates a missing file private to the user (it holds request and response bodies; SQLite derives the
 * -wal/-shm modes from it), and refuses one that exists but cannot serve: an empty file would otherwise
 * be silently initialised as a new database, every key and provider gone.
 */
function prepareFile(file: string): void {
  let size: number;
  try {
    const st = statSync(file);
    if (st.isDirectory()) throw new StorageError('database_unreadable', `${file} is a folder, not a database file. Move it away, or set GATEWAY_HOME to another folder.`);
    size = st.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw describeFailure(error, file);
    try {
      createInitialised(file);
    } catch (e) {
      throw describeFailure(e, file);
    }
    return;
  }
  if (size === 0) {
    throw new StorageError(
      'database_empty',
      `${file} is empty (0 bytes): the keys, providers and call log it held are gone (truncated by a full disk, a sync tool or a bad copy?). ` +
        `Restore it from a backup, or delete it to start afresh: rm '${file}'`,
    );
  }
  try {
    accessSync(file, constants.R_OK | constants.W_OK);
    // WAL needs to create gateway.db-wal and -shm beside the file.
    accessSync(path.dirname(file), constants.W_OK);
  } catch (error) {
    throw describeFailure(error, file);
  }
}

/**
 * A new database file appears already initialised (a SQLite header, WAL mode), never as 0 bytes: it is
 * made under a private name and linked into place, so a process opening it at the same moment can tell a
 * new file from one that was truncated. If another process linked its own first, that one is used.
 */
function createInitialised(file: string): void {
  const tmp = `${file}.new-${process.pid}-${randomBytes(4).toString('hex')}`;
  closeSync(openSync(tmp, 'wx', 0o600));
  try {
    const db = new BetterSqlite3(tmp);
    try {
      // Both only take effect before the first table exists. 16 KiB pages: a call's row holds up to 64 KiB of
      // each body (coding agents send such prompts every turn), and with 4 KiB pages writing one cost ~95 µs
      // more of the audit thread (measured: 565 → 470 µs for a 100 KB prompt); small rows written in batches
      // cost the same. Incremental auto-vacuum lets retention give disk space back (purgeCalls).
      db.pragma('page_size = 16384');
      db.pragma('auto_vacuum = INCREMENTAL');
      db.pragma('journal_mode = WAL');
    } finally {
      db.close();
    }
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
  }
}

const READONLY_CODES = new Set(['EROFS', 'EACCES', 'EPERM', 'SQLITE_READONLY', 'SQLITE_READONLY_DBMOVED', 'SQLITE_READONLY_DIRECTORY', 'SQLITE_READONLY_RECOVERY', 'SQLITE_READONLY_CANTINIT', 'SQLITE_READONLY_CANTLOCK', 'SQLITE_READONLY_ROLLBACK', 'SQLITE_PERM', 'SQLITE_AUTH']);
const CORRUPT_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_VTAB', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_INDEX']);

/**
 * A SQLite failure as a StorageError that names the file and says what to do; anything else (a
 * StorageError, a port in use) passes through unchanged, so callers can wrap a whole block.
 */
export function storageErrorFor(error: unknown, file: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? describeFailure(error, file) : error;
}

/** A failure of the database file (SQLite's, or the file system's while preparing it), named and explained. */
function describeFailure(error: unknown, file: string): Error {
  if (error instanceof StorageError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = (error as Error)?.message ?? String(error);
  if (typeof code !== 'string') return error instanceof Error ? error : new Error(message);
  const dir = path.dirname(file);
  if (READONLY_CODES.has(code)) {
    return new StorageError(
      'database_readonly',
      `${file} cannot be written (${message}). The gateway needs to write it and to create files beside it in ${dir}: ` +
        `check that this user owns both (ls -l '${dir}') and that the disk is not mounted read-only, or set GATEWAY_HOME to a writable folder.`,
    );
  }
  if (code === 'SQLITE_FULL') {
    return new StorageError(
      'database_full',
      `${file} cannot grow: the disk is full (${message}). Free space on that disk (df -h '${dir}'), or lower audit.maxBytes / audit.maxRows ` +
        `in settings.json, or run \`gateway logs purge --older-than DAYS\`.`,
    );
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return new StorageError(
      'database_io',
      `${file} could not be read or written: a disk I/O error (${message}). Check the disk (dmesg, df -h '${dir}'); ` +
        `if it persists, stop the gateway and copy the file elsewhere before anything else.`,
    );
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new StorageError(
      'database_busy',
      `${file} stayed locked by another process for longer than the busy timeout (${message}). ` +
        `A long \`gateway logs purge\` or another program holding the file? Retry in a moment.`,
    );
  }
  if (CORRUPT_CODES.has(code)) {
    return new StorageError(
      'database_corrupt',
      `${file} is damaged and cannot be read (${message}). Stop every gateway, move it away ` +
        `(mv '${file}' '${file}.broken') and restore a backup, or let the gateway create a new one (keys and providers must then be added again).`,
    );
  }
  if (code.startsWith('SQLITE_') || code.startsWith('E')) {
    return new StorageError(
      'database_unreadable',
      `${file} cannot be opened (${message}). Check the file and its folder ${dir} (does it exist, is it a folder, is the disk full?), or set GATEWAY_HOME to another folder.`,
    );
  }
  return error instanceof Error ? error : new Error(message);
}
