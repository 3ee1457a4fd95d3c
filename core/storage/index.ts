/**
 * The storage layer as one object: the SQLite connection, the config repositories and the audit
 * writer. The server and the CLI each open their own Store on the same file.
 */
import { dataPaths, ensureDataHome, type DataPaths } from '../home.ts';
import { AliasesRepo } from './aliases-repo.ts';
import { AuditWriter, type AuditWriterOptions } from './audit-writer.ts';
import { readConfigVersion } from './config-version.ts';
import { ThreadedAuditWriter, type AuditSink } from './threaded-audit-writer.ts';
import { openDatabase, type Database } from './db.ts';
import { KeysRepo } from './keys-repo.ts';
import { PricesRepo } from './prices-repo.ts';
import { ProvidersRepo } from './providers-repo.ts';
import { ReadRunner } from './read-runner.ts';

export interface StoreOptions {
  audit?: AuditWriterOptions;
  /** Write audit rows on a worker thread (the server does; the CLI writes none). */
  auditThread?: boolean;
  /** Run the dashboards' heavier reads (`reads`) on a worker thread (the server does). */
  readThread?: boolean;
}

export class Store {
  readonly db: Database;
  readonly keys: KeysRepo;
  readonly providers: ProvidersRepo;
  readonly aliases: AliasesRepo;
  readonly prices: PricesRepo;
  /** Starts no timer until the first row is recorded, so opening a Store from the CLI costs nothing. */
  readonly audit: AuditSink;
  /** The dashboards' heavier reads, off the request thread when `readThread` is set. */
  readonly reads: ReadRunner;
  private closed = false;

  constructor(db: Database, options: StoreOptions = {}, file?: string) {
    this.db = db;
    this.keys = new KeysRepo(db);
    this.providers = new ProvidersRepo(db);
    this.aliases = new AliasesRepo(db);
    this.prices = new PricesRepo(db);
    this.reads = new ReadRunner(db, options.readThread && file ? file : null);
    this.audit = options.auditThread && file ? new ThreadedAuditWriter(db, file, options.audit) : new AuditWriter(db, options.audit);
  }

  /** Opens (creating and migrating if needed) the database in a data home. */
  static open(home: string, options: StoreOptions = {}): Store {
    ensureDataHome(home);
    return Store.openFile(dataPaths(home).db, options);
  }

  static openFile(file: string, options: StoreOptions = {}): Store {
    return new Store(openDatabase(file), options, file);
  }

  static paths(home: string): DataPaths {
    return dataPaths(home);
  }

  configVersion(): number {
    return readConfigVersion(this.db);
  }

  /** Writes queued audit rows, then closes the connection. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.reads.close();
    this.audit.close();
    this.db.close();
  }
}

export { openDatabase, StorageError, type Database, type StorageErrorCode } from './db.ts';
export { readConfigVersion, bumpConfigVersion } from './config-version.ts';
export { MIGRATIONS, SCHEMA_VERSION } from './migrations.ts';
export { KeysRepo, type StoredKey, type NewKey, type KeyPatch, type KeyState, type BudgetPeriod, type IssuedKey } from './keys-repo.ts';
export { ProvidersRepo, type NewProvider, type ProviderPatch } from './providers-repo.ts';
export { AliasesRepo, type Alias, type AliasTarget, type RoutingStrategy } from './aliases-repo.ts';
export { PricesRepo, type PriceInput, type UserPrice } from './prices-repo.ts';
export {
  AuditWriter,
  truncateBody,
  MAX_BODY_BYTES,
  type AuditWriterOptions,
  type AuditWriterStats,
  type CallRow,
  type Pricing,
} from './audit-writer.ts';
export {
  listCalls,
  getCall,
  usageSummary,
  spendForKey,
  spendForKeyBetween,
  spendTotals,
  parseAttempts,
  purgeCalls,
  type CallSummary,
  type StoredCall,
  type CallAttempt,
  type UsageSummaryRow,
  type UsageGrouping,
  type SpendTotals,
} from './audit-queries.ts';
