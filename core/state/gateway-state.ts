/**
 * The one interface to the gateway's shared state: configuration (keys, providers, aliases, prices)
 * with change notification, the audit sink and its queries. Two implementations: `Store` (one SQLite
 * file, synchronous answers) and `TeamState` (PostgreSQL plus Redis, asynchronous ones). Budget
 * reservations and rate-limit windows have their own interfaces (`budgets.ts`, `rate-windows.ts`)
 * and come from `GatewayState.counters()`. Nothing outside `core/storage` holds a database handle.
 */
import type { LoginStore } from '../admin/login-codes.ts';
import type { CallJson } from '../call-json.ts';
import type { ProviderSettings } from '../providers/types.ts';
import type { Alias, AliasTarget, RoutingStrategy } from '../storage/aliases-repo.ts';
import type {
  CallSummary,
  ListCallsOptions,
  PurgeOptions,
  SpendTotals,
  StoredCall,
  UsageSummaryOptions,
  UsageSummaryRow,
} from '../storage/audit-queries.ts';
import type { AdminTokenInfo, IssuedAdminToken } from '../storage/admin-tokens.ts';
import type { IssuedKey, KeyPatch, NewKey, StoredKey } from '../storage/keys-repo.ts';
import type { LogSearch, ProviderStats } from '../storage/log-search.ts';
import type { PriceInput, UserPrice } from '../storage/prices-repo.ts';
import type { NewProvider, ProviderPatch } from '../storage/providers-repo.ts';
import type { AuditSink } from '../storage/threaded-audit-writer.ts';
import type { Awaitable } from './awaitable.ts';
import type { Budgets } from './budgets.ts';
import type { RateWindows } from './rate-windows.ts';

export interface KeysStore {
  create(input: NewKey): Awaitable<IssuedKey>;
  list(options?: { includeDeleted?: boolean }): Awaitable<StoredKey[]>;
  findByName(name: string): Awaitable<StoredKey | null>;
  findByHash(hash: string): Awaitable<StoredKey | null>;
  findById(id: string): Awaitable<StoredKey | null>;
  setState(name: string, state: 'active' | 'disabled'): Awaitable<StoredKey>;
  delete(name: string): Awaitable<StoredKey>;
  rotate(name: string): Awaitable<IssuedKey>;
  update(name: string, patch: KeyPatch): Awaitable<StoredKey>;
  setCassette(name: string, spec: string | null): Awaitable<StoredKey>;
}

export interface ProvidersStore {
  add(settings: NewProvider): Awaitable<ProviderSettings>;
  get(name: string): Awaitable<ProviderSettings | null>;
  list(): Awaitable<ProviderSettings[]>;
  remove(name: string): Awaitable<ProviderSettings>;
  update(name: string, patch: ProviderPatch): Awaitable<ProviderSettings>;
  setDiscoveredModels(name: string, models: string[]): Awaitable<void>;
  discoveredModels(name: string): Awaitable<string[]>;
  lastDiscoveredAt(name: string): Awaitable<number | null>;
  allServedModels(): Awaitable<Map<string, string[]>>;
}

export interface AliasesStore {
  set(name: string, targets: AliasTarget[], strategy?: RoutingStrategy): Awaitable<Alias>;
  get(name: string): Awaitable<Alias | null>;
  list(): Awaitable<Alias[]>;
  remove(name: string): Awaitable<void>;
}

export interface PricesStore {
  set(model: string, price: PriceInput): Awaitable<UserPrice>;
  get(model: string): Awaitable<UserPrice | null>;
  list(): Awaitable<UserPrice[]>;
  remove(model: string): Awaitable<void>;
}

/** Admin tokens per person: hashed, shared by every instance on the same state. */
export interface AdminTokensStore {
  create(name: string): Awaitable<IssuedAdminToken>;
  list(options?: { includeRevoked?: boolean }): Awaitable<AdminTokenInfo[]>;
  revoke(name: string): Awaitable<AdminTokenInfo>;
  /** The live token this secret is (its person's name, prefix and creation time), or null. */
  holderOf(secret: string): Awaitable<AdminTokenInfo | null>;
}

export type DayModelSpend = { day: string; model: string; cost_usd: number; requests: number; unpriced: number; estimated: number };

/** The audit trail's read side (and retention), whatever holds it. */
export interface CallQueries {
  listCalls(options: ListCallsOptions): Awaitable<CallSummary[]>;
  getCall(id: string): Awaitable<StoredCall | null>;
  usageSummary(options: UsageSummaryOptions): Awaitable<UsageSummaryRow[]>;
  spendForKey(keyId: string, sinceMs?: number): Awaitable<number>;
  spendForKeyBetween(keyId: string, fromMs: number, toMs: number): Awaitable<number>;
  spendTotals(range: { todayStartMs: number; monthStartMs: number }): Awaitable<SpendTotals>;
  spendSinceBy(by: 'key' | 'provider', sinceDayStartMs: number): Awaitable<Map<string, number>>;
  spendTotalsFromDaily(range: { todayStartMs: number; monthStartMs: number }): Awaitable<SpendTotals>;
  purgeCalls(options: PurgeOptions): Awaitable<number>;
  searchCalls(q: LogSearch): Awaitable<CallJson[]>;
  providerStats(range: { since: number; until: number; buckets: number }): Awaitable<ProviderStats[]>;
  spendByDayAndModel(since: number | undefined): Awaitable<DayModelSpend[]>;
  unpricedByKey(since: number | undefined): Awaitable<Array<{ key: string; unpriced: number }>>;
}

/** Everything the server needs to build its in-memory view in one read. */
export interface ConfigSnapshot {
  version: number;
  keys: StoredKey[];
  providers: ProviderSettings[];
  served: Map<string, string[]>;
  aliases: Alias[];
  prices: UserPrice[];
}

export type StateKind = 'sqlite' | 'team';

export interface GatewayState {
  readonly kind: StateKind;
  /** Where the state lives, for messages (a file, or the database URL without its password). */
  readonly location: string;
  /**
   * Which of the state's servers `err` says cannot be reached (`Redis at redis://host:port`), or null when it
   * says something else. Absent where the state has no server (SQLite).
   */
  unreachable?(err: unknown): string | null;
  readonly keys: KeysStore;
  readonly providers: ProvidersStore;
  readonly aliases: AliasesStore;
  readonly prices: PricesStore;
  readonly adminTokens: AdminTokensStore;
  readonly calls: CallQueries;
  readonly audit: AuditSink;
  /** The counter every configuration change moves (the poll fallback compares it). */
  configVersion(): Awaitable<number>;
  snapshot(): Awaitable<ConfigSnapshot>;
  /**
   * Calls `fn` soon after any instance or CLI changed the configuration (a push where the store has
   * one, never slower than a poll every `pollMs`). Returns the unsubscribe function. A push about one key
   * names it (`changedKeyHash`, the hash it had before the change), so an instance that cannot read the change
   * yet can stop honouring that key meanwhile.
   */
  watchConfig(fn: (changedKeyHash?: string) => void, pollMs: number): () => void;
  /** Waits until every queued audit row is written (a no-op where flush is synchronous). */
  drainAudit(): Awaitable<void>;
  /** Flushes the audit rows and closes every connection. Safe to call twice. */
  close(): Awaitable<void>;
}

/** A state with the counters that go with it (memory for SQLite, Redis for a team). */
export interface OpenedState {
  state: GatewayState;
  budgets: Budgets;
  limiter: RateWindows;
  /** Where dashboard sign-ins are kept when not in this process (a team's Redis). */
  logins?: LoginStore;
}
