/**
 * Keys, providers, aliases and prices in PostgreSQL, with the SQLite repositories' validation and row
 * mappings (one set of rules for both stores). Every change bumps `config_version` in its own
 * transaction and, once committed, announces itself (`onChange`: Redis pub/sub), so every instance
 * reloads at once. Provider secrets are never stored: a provider whose key would live in the OS
 * keychain is refused, since a team's servers read their provider keys from their environment.
 */
import { displayPrefix, generateLocalKey, hashLocalKey, randomBase62 } from '../../keys/local-key.ts';
import type { ProviderSettings } from '../../providers/types.ts';
import { TEAM_KEYCHAIN_MESSAGE } from '../../secrets/team-secrets.ts';
import type { AliasesStore, KeysStore, PricesStore, ProvidersStore } from '../../state/gateway-state.ts';
import { checkTargets, ROUTING_STRATEGIES, toAlias, type Alias, type AliasRow, type AliasTarget, type RoutingStrategy } from '../aliases-repo.ts';
import { StorageError } from '../db.ts';
import { checkCassette, checkName, limitColumns, toStoredKey, type IssuedKey, type KeyPatch, type KeyRow, type NewKey, type StoredKey } from '../keys-repo.ts';
import { toPrice, toPriceRow, type PriceInput, type PriceRow, type UserPrice } from '../prices-repo.ts';
import { checkProviderName, definedOnly, toColumns, toSettings, type NewProvider, type ProviderPatch, type ProviderRow } from '../providers-repo.ts';
import { inTransaction, type Pool, type PoolClient } from './pg-pool.ts';

type Queryable = Pick<PoolClient, 'query'>;

/** Runs a change and the version bump in one transaction; announces it after the commit. */
export class PgConfigWriter {
  readonly pool: Pool;
  readonly #announce: (keyHash?: string) => void;

  constructor(pool: Pool, announce: (keyHash?: string) => void) {
    this.pool = pool;
    this.#announce = announce;
  }

  /** `keyHash`: the change is to that key (its hash before the change), named in the announcement. */
  async change<T>(fn: (c: PoolClient) => Promise<T>, bump: (result: T) => boolean = () => true, keyHash?: () => string | undefined): Promise<T> {
    let bumped = false;
    const result = await inTransaction(this.pool, async (c) => {
      const r = await fn(c);
      if (bump(r)) {
        await c.query(`UPDATE meta SET v = v + 1 WHERE k = 'config_version'`);
        bumped = true;
      }
      return r;
    });
    if (bumped) this.#announce(keyHash?.());
    return result;
  }

  async version(): Promise<number> {
    const r = await this.pool.query<{ v: number }>(`SELECT v FROM meta WHERE k = 'config_version'`);
    return r.rows[0]?.v ?? 0;
  }
}

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (err: unknown): boolean => (err as { code?: string })?.code === UNIQUE_VIOLATION;

export class PgKeys implements KeysStore {
  readonly #w: PgConfigWriter;

  constructor(writer: PgConfigWriter) {
    this.#w = writer;
  }

  async create(input: NewKey): Promise<IssuedKey> {
    const name = checkName(input.name);
    const limits = limitColumns(input, null);
    const secret = generateLocalKey();
    const id = `key_${randomBase62(16)}`;
    const cassette = checkCassette(input.cassette ?? null);
    try {
      return await this.#w.change(async (c) => {
        await c.query(
          `INSERT INTO keys (id, name, hash, prefix, state, created_at, budget_usd, budget_period, rpm, tpm, models, cassette)
           VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $9, $10, $11)`,
          [id, name, hashLocalKey(secret), displayPrefix(secret), Date.now(), limits.budget_usd, limits.budget_period, limits.rpm, limits.tpm, limits.models, cassette],
        );
        return { key: await mustById(c, id), secret };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new StorageError('key_exists', `a key named "${name}" already exists`);
      throw err;
    }
  }

  async list(options: { includeDeleted?: boolean } = {}): Promise<StoredKey[]> {
    const where = options.includeDeleted === true ? '' : `WHERE state <> 'deleted'`;
    const r = await this.#w.pool.query<KeyRow>(`SELECT * FROM keys ${where} ORDER BY created_at, seq`);
    return r.rows.map(toStoredKey);
  }

  findByName(name: string): Promise<StoredKey | null> {
    return keyWhere(this.#w.pool, `name = $1 AND state <> 'deleted'`, name);
  }

  findByHash(hash: string): Promise<StoredKey | null> {
    return keyWhere(this.#w.pool, `hash = $1`, hash);
  }

  findById(id: string): Promise<StoredKey | null> {
    return keyWhere(this.#w.pool, `id = $1`, id);
  }

  setState(name: string, state: 'active' | 'disabled'): Promise<StoredKey> {
    if (state !== 'active' && state !== 'disabled') {
      throw new StorageError('invalid_input', `a key's state can be set to active or disabled, not "${String(state)}"`);
    }
    return this.#onLive(name, (c, key) => c.query(`UPDATE keys SET state = $1 WHERE id = $2`, [state, key.id]));
  }

  delete(name: string): Promise<StoredKey> {
    return this.#onLive(name, (c, key) => c.query(`UPDATE keys SET state = 'deleted', deleted_at = $1 WHERE id = $2`, [Date.now(), key.id]));
  }

  async rotate(name: string): Promise<IssuedKey> {
    const secret = generateLocalKey();
    const key = await this.#onLive(name, (c, k) =>
      c.query(`UPDATE keys SET hash = $1, prefix = $2, rotated_at = $3 WHERE id = $4`, [hashLocalKey(secret), displayPrefix(secret), Date.now(), k.id]),
    );
    return { key, secret };
  }

  async update(name: string, patch: KeyPatch): Promise<StoredKey> {
    try {
      return await this.#onLive(name, async (c, key) => {
        const newName = patch.name === undefined ? key.name : checkName(patch.name);
        const l = limitColumns(patch, key);
        await c.query(`UPDATE keys SET name = $1, budget_usd = $2, budget_period = $3, rpm = $4, tpm = $5, models = $6 WHERE id = $7`, [
          newName, l.budget_usd, l.budget_period, l.rpm, l.tpm, l.models, key.id,
        ]);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new StorageError('key_exists', `a key named "${patch.name}" already exists`);
      throw err;
    }
  }

  setCassette(name: string, spec: string | null): Promise<StoredKey> {
    const cassette = checkCassette(spec);
    return this.#onLive(name, (c, key) => c.query(`UPDATE keys SET cassette = $1 WHERE id = $2`, [cassette, key.id]));
  }

  /** Locks the live key named `name`, applies `fn`, and returns the key as it is after. */
  #onLive(name: string, fn: (c: PoolClient, key: StoredKey) => Promise<unknown>): Promise<StoredKey> {
    let before: string | undefined;
    return this.#w.change(
      async (c) => {
        const r = await c.query<KeyRow>(`SELECT * FROM keys WHERE name = $1 AND state <> 'deleted' FOR UPDATE`, [name]);
        if (r.rows.length === 0) throw new StorageError('key_not_found', `no key named "${name}"`);
        const key = toStoredKey(r.rows[0]);
        before = key.hash;
        await fn(c, key);
        return mustById(c, key.id);
      },
      undefined,
      () => before,
    );
  }
}

async function keyWhere(q: Queryable, where: string, value: string): Promise<StoredKey | null> {
  const r = await q.query<KeyRow>(`SELECT * FROM keys WHERE ${where}`, [value]);
  return r.rows.length === 0 ? null : toStoredKey(r.rows[0]);
}

async function mustById(q: Queryable, id: string): Promise<StoredKey> {
  const k = await keyWhere(q, 'id = $1', id);
  if (k === null) throw new StorageError('key_not_found', `no key with id ${id}`);
  return k;
}

/** Team mode stores no secret and reads none from a laptop's keychain. */
function refuseKeychain(p: { keySource: ProviderSettings['keySource'] }): void {
  if (p.keySource === 'keychain') throw new StorageError('secret_in_settings', TEAM_KEYCHAIN_MESSAGE);
}

export class PgProviders implements ProvidersStore {
  readonly #w: PgConfigWriter;

  constructor(writer: PgConfigWriter) {
    this.#w = writer;
  }

  async add(settings: NewProvider): Promise<ProviderSettings> {
    const name = checkProviderName(settings.name);
    refuseKeychain(settings);
    const col = toColumns(settings);
    try {
      return await this.#w.change(async (c) => {
        // Serialises concurrent adds, so `seq` (the tie-break of equal priorities) stays unique and ordered.
        await c.query('LOCK TABLE providers IN SHARE ROW EXCLUSIVE MODE');
        await c.query(
          `INSERT INTO providers (name, type, preset, base_url, models, priority, key_env, key_source, options, seq, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, (SELECT COALESCE(MAX(seq), 0) + 1 FROM providers), $10)`,
          [name, col.type, col.preset, col.base_url, col.models, col.priority, col.key_env, col.key_source, col.options, Date.now()],
        );
        return mustProvider(c, name);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new StorageError('provider_exists', `a provider named "${name}" already exists`);
      throw err;
    }
  }

  get(name: string): Promise<ProviderSettings | null> {
    return providerNamed(this.#w.pool, name);
  }

  async list(): Promise<ProviderSettings[]> {
    const r = await this.#w.pool.query<ProviderRow>(`SELECT * FROM providers ORDER BY priority, seq`);
    return r.rows.map(toSettings);
  }

  remove(name: string): Promise<ProviderSettings> {
    return this.#w.change(async (c) => {
      const existing = await mustProvider(c, name);
      await c.query(`DELETE FROM providers WHERE name = $1`, [name]);
      return existing;
    });
  }

  update(name: string, patch: ProviderPatch): Promise<ProviderSettings> {
    return this.#w.change(async (c) => {
      const current = await mustProvider(c, name, true);
      const next: NewProvider = { ...current, ...definedOnly(patch) };
      refuseKeychain(next);
      const col = toColumns(next);
      await c.query(
        `UPDATE providers SET type = $2, preset = $3, base_url = $4, models = $5, priority = $6, key_env = $7, key_source = $8, options = $9 WHERE name = $1`,
        [name, col.type, col.preset, col.base_url, col.models, col.priority, col.key_env, col.key_source, col.options],
      );
      if (next.baseUrl !== current.baseUrl || next.type !== current.type) await c.query(`DELETE FROM provider_models WHERE provider = $1`, [name]);
      return mustProvider(c, name);
    });
  }

  async setDiscoveredModels(name: string, models: string[]): Promise<void> {
    const unique = [...new Set(models)].filter((m) => typeof m === 'string' && m.length > 0).sort();
    await this.#w.change(
      async (c) => {
        await mustProvider(c, name, true);
        const before = (await c.query<{ model: string }>(`SELECT model FROM provider_models WHERE provider = $1 ORDER BY model`, [name])).rows.map((r) => r.model);
        const changed = before.length !== unique.length || before.some((m, i) => m !== unique[i]);
        await c.query(`DELETE FROM provider_models WHERE provider = $1`, [name]);
        if (unique.length > 0) {
          await c.query(`INSERT INTO provider_models (provider, model, discovered_at) SELECT $1, m, $3 FROM unnest($2::text[]) AS m`, [name, unique, Date.now()]);
        }
        return changed;
      },
      (changed) => changed,
    );
  }

  async discoveredModels(name: string): Promise<string[]> {
    const r = await this.#w.pool.query<{ model: string }>(`SELECT model FROM provider_models WHERE provider = $1 ORDER BY model`, [name]);
    return r.rows.map((x) => x.model);
  }

  async lastDiscoveredAt(name: string): Promise<number | null> {
    const r = await this.#w.pool.query<{ at: number | null }>(`SELECT MAX(discovered_at) AS at FROM provider_models WHERE provider = $1`, [name]);
    return r.rows[0]?.at ?? null;
  }

  async allServedModels(): Promise<Map<string, string[]>> {
    return servedModels(this.#w.pool, await this.list());
  }
}

export async function servedModels(q: Queryable, providers: ProviderSettings[]): Promise<Map<string, string[]>> {
  const rows = (await q.query<{ provider: string; model: string }>(`SELECT provider, model FROM provider_models ORDER BY provider, model`)).rows;
  const discovered = new Map<string, string[]>();
  for (const { provider, model } of rows) {
    let list = discovered.get(provider);
    if (list === undefined) discovered.set(provider, (list = []));
    list.push(model);
  }
  return new Map(providers.map((p) => [p.name, p.models ?? discovered.get(p.name) ?? []]));
}

async function providerNamed(q: Queryable, name: string, lock = false): Promise<ProviderSettings | null> {
  const r = await q.query<ProviderRow>(`SELECT * FROM providers WHERE name = $1${lock ? ' FOR UPDATE' : ''}`, [name]);
  return r.rows.length === 0 ? null : toSettings(r.rows[0]);
}

async function mustProvider(q: Queryable, name: string, lock = false): Promise<ProviderSettings> {
  const p = await providerNamed(q, name, lock);
  if (p === null) throw new StorageError('provider_not_found', `no provider named "${name}"`);
  return p;
}

export class PgAliases implements AliasesStore {
  readonly #w: PgConfigWriter;

  constructor(writer: PgConfigWriter) {
    this.#w = writer;
  }

  async set(name: string, targets: AliasTarget[], strategy: RoutingStrategy = 'priority'): Promise<Alias> {
    if (typeof name !== 'string' || name.length === 0 || name.trim() !== name) {
      throw new StorageError('invalid_input', 'an alias name is a non-empty name without surrounding spaces');
    }
    if (!ROUTING_STRATEGIES.includes(strategy)) throw new StorageError('invalid_input', `a routing strategy is one of ${ROUTING_STRATEGIES.join(', ')}`);
    const clean = checkTargets(targets);
    await this.#w.change((c) =>
      c.query(
        `INSERT INTO aliases (name, targets, strategy) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET targets = excluded.targets, strategy = excluded.strategy`,
        [name, JSON.stringify(clean), strategy],
      ),
    );
    return { name, targets: clean, strategy };
  }

  async get(name: string): Promise<Alias | null> {
    const r = await this.#w.pool.query<AliasRow>(`SELECT * FROM aliases WHERE name = $1`, [name]);
    return r.rows.length === 0 ? null : toAlias(r.rows[0]);
  }

  async list(): Promise<Alias[]> {
    return (await this.#w.pool.query<AliasRow>(`SELECT * FROM aliases ORDER BY name`)).rows.map(toAlias);
  }

  async remove(name: string): Promise<void> {
    await this.#w.change(async (c) => {
      const r = await c.query(`DELETE FROM aliases WHERE name = $1`, [name]);
      if (r.rowCount === 0) throw new StorageError('alias_not_found', `no alias named "${name}"`);
    });
  }
}

export class PgPrices implements PricesStore {
  readonly #w: PgConfigWriter;

  constructor(writer: PgConfigWriter) {
    this.#w = writer;
  }

  async set(model: string, price: PriceInput): Promise<UserPrice> {
    const row = toPriceRow(model, price);
    await this.#w.change((c) =>
      c.query(
        `INSERT INTO prices (model, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, extra, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (model) DO UPDATE SET input_per_mtok = excluded.input_per_mtok, output_per_mtok = excluded.output_per_mtok,
           cache_read_per_mtok = excluded.cache_read_per_mtok, cache_write_per_mtok = excluded.cache_write_per_mtok,
           extra = excluded.extra, updated_at = excluded.updated_at`,
        [row.model, row.input_per_mtok, row.output_per_mtok, row.cache_read_per_mtok, row.cache_write_per_mtok, row.extra, row.updated_at],
      ),
    );
    return toPrice(row);
  }

  async get(model: string): Promise<UserPrice | null> {
    const r = await this.#w.pool.query<PriceRow>(`SELECT * FROM prices WHERE model = $1`, [model]);
    return r.rows.length === 0 ? null : toPrice(r.rows[0]);
  }

  async list(): Promise<UserPrice[]> {
    return (await this.#w.pool.query<PriceRow>(`SELECT * FROM prices ORDER BY model`)).rows.map(toPrice);
  }

  async remove(model: string): Promise<void> {
    await this.#w.change(async (c) => {
      const r = await c.query(`DELETE FROM prices WHERE model = $1`, [model]);
      if (r.rowCount === 0) throw new StorageError('price_not_found', `no price set for "${model}"`);
    });
  }
}
