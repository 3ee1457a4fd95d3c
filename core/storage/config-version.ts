/**
 * The config version: an integer in `meta` bumped by every change to keys, providers, aliases or
 * prices. The server polls it (every 250 ms) and reloads its in-memory config when it moves, which is
 * how a CLI change in another process takes effect within a second.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from './db.ts';

interface VersionStatements {
  read: BetterSqlite3.Statement<[], number>;
  bump: BetterSqlite3.Statement<[], unknown>;
}

// Prepared once per connection: the poll is then a single cached statement step on a one-row lookup.
const statementsByDb = new WeakMap<Database, VersionStatements>();

function statements(db: Database): VersionStatements {
  let s = statementsByDb.get(db);
  if (s === undefined) {
    s = {
      read: db.prepare<[], number>(`SELECT v FROM meta WHERE k = 'config_version'`).pluck(),
      bump: db.prepare<[], unknown>(`UPDATE meta SET v = v + 1 WHERE k = 'config_version'`),
    };
    statementsByDb.set(db, s);
  }
  return s;
}

export function readConfigVersion(db: Database): number {
  return statements(db).read.get() ?? 0;
}

/** Call inside the transaction of the change it announces, so readers never see one without the other. */
export function bumpConfigVersion(db: Database): void {
  statements(db).bump.run();
}

/**
 * Runs a configuration change and bumps `config_version` in one IMMEDIATE transaction, so a CLI write
 * and the server's poll never see one without the other, and writers wait (busy timeout) rather than
 * fail with SQLITE_BUSY.
 */
export function changeConfig<T>(db: Database, change: () => T): T {
  return db
    .transaction(() => {
      const result = change();
      bumpConfigVersion(db);
      return result;
    })
    .immediate();
}
