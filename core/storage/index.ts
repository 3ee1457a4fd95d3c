/**
 * The one-machine implementation of `GatewayState`: one SQLite file with the config repositories, the
 * audit writer and its queries, every answer synchronous. The server and the CLI each open their own
 * Store on the same file; a change made by one reaches the other through the polled config version.
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
import { SqliteCallQueries } from './sqlite-calls.ts';
import type { ConfigSnapshot, GatewayState } from '../state/gateway-state.ts';

export interface StoreOptions {
  audit?: AuditWriterOptions;
  /** Write audit rows on a worker thread (the server does; the CLI writes none). */
  auditThread?: boolean;
}

export class Store implements GatewayState {
  readonly kind = 'sqlite' as const;
  readonly location: string;
  /** The connection itself: for the storage layer and tests only; the gateway goes through the methods. */
  readonly db: Database;
  readonly keys: KeysRepo;
  readonly providers: ProvidersRepo;
  readonly aliases: AliasesRepo;
  readonly prices: PricesRepo;
  readonly calls: SqliteCallQueries;
  /** Starts no timer until the first row is recorded, so opening a Store from the CLI costs nothing. */
  readonly audit: AuditSink;
  private closed = false;

  constructor(db: Database, options: StoreOptions = {}, file?: string) {
    this.db = db;
    this.location = file ?? db.name;
    this.calls = new SqliteCallQueries(db);
    this.keys = new KeysRepo(db);
    this.providers = new ProvidersRepo(db);
    this.aliases = new AliasesRepo(db);
    this.prices = new PricesRepo(db);
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

  /** One read transaction, so the keys, providers and aliases all come from the same version. */
  snapshot(): ConfigSnapshot {
    return this.db.transaction(() => ({
      version: readConfigVersion(this.db),
      keys: this.keys.list({ includeDeleted: true }),
      providers: this.providers.list(),
      served: this.providers.allServedModels(),
      aliases: this.aliases.list(),
      prices: this.prices.list(),
    }))();
  }

  /** SQLite has no push: the version is polled (a cached one-row read), `pollMs` apart. */
  watchConfig(fn: () => void, pollMs: number): () => void {
    let seen = this.configVersion();
    const timer = setInterval(() => {
      if (this.closed) return;
      const v = this.configVersion();
      if (v !== seen) {
        seen = v;
        fn();
      }
    }, pollMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  drainAudit(): void {
    this.audit.flush();
  }

  /** Writes queued audit rows, then closes the connection. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
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
