/**
 * Providers' non-secret settings and the cache of the models each one reported. Secrets never come
 * here: the repo refuses settings that look like they carry one (a key in `options`, credentials in
 * the base URL), since SQLite files get copied, backed up and attached to bug reports.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { PROVIDER_TYPES, type ProviderSettings } from '../providers/types.ts';
import { bumpConfigVersion, changeConfig } from './config-version.ts';
import { StorageError, type Database } from './db.ts';

export type NewProvider = Omit<ProviderSettings, 'seq'>;
/** Name and seq are identity: renaming would orphan the provider's keychain entry. */
export type ProviderPatch = Partial<Omit<ProviderSettings, 'name' | 'seq'>>;

export interface ProviderRow {
  name: string;
  type: ProviderSettings['type'];
  preset: string | null;
  base_url: string;
  models: string | null;
  priority: number;
  key_env: string | null;
  key_source: ProviderSettings['keySource'];
  options: string;
  seq: number;
  created_at: number;
}

type ProviderColumns = Omit<ProviderRow, 'name' | 'seq' | 'created_at'>;

const KEY_SOURCES: readonly ProviderSettings['keySource'][] = ['keychain', 'env', 'none'];
/** Option names that would hold a credential. Matched at any depth (e.g. `headers.Authorization`). */
const SECRET_OPTION_NAME = /^(api[-_]?key|key|secret|client[-_]?secret|token|access[-_]?token|password|authorization|x-api-key|api[-_]?token)$/i;
/** Query parameters some providers accept a key in (Gemini's `?key=`). */
const SECRET_QUERY_PARAMS = ['key', 'api_key', 'apikey', 'token', 'access_token'];

export class ProvidersRepo {
  private readonly db: Database;
  private readonly byName: BetterSqlite3.Statement<[string], ProviderRow>;
  private readonly ordered: BetterSqlite3.Statement<[], ProviderRow>;
  private readonly discovered: BetterSqlite3.Statement<[string], string>;
  private readonly allDiscovered: BetterSqlite3.Statement<[], { provider: string; model: string }>;

  constructor(db: Database) {
    this.db = db;
    this.byName = db.prepare(`SELECT * FROM providers WHERE name = ?`);
    this.ordered = db.prepare(`SELECT * FROM providers ORDER BY priority, seq`);
    this.discovered = db.prepare<[string], string>(`SELECT model FROM provider_models WHERE provider = ? ORDER BY model`).pluck();
    this.allDiscovered = db.prepare(`SELECT provider, model FROM provider_models ORDER BY provider, model`);
  }

  add(settings: NewProvider): ProviderSettings {
    const name = checkProviderName(settings.name);
    const columns = toColumns(settings);
    return changeConfig(this.db, () => {
      if (this.byName.get(name) !== undefined) {
        throw new StorageError('provider_exists', `a provider named "${name}" already exists`);
      }
      this.db
        .prepare(
          `INSERT INTO providers (name, type, preset, base_url, models, priority, key_env, key_source, options, seq, created_at)
           VALUES (@name, @type, @preset, @base_url, @models, @priority, @key_env, @key_source, @options,
                   (SELECT COALESCE(MAX(seq), 0) + 1 FROM providers), @created_at)`,
        )
        .run({ name, ...columns, created_at: Date.now() });
      return this.mustGet(name);
    });
  }

  get(name: string): ProviderSettings | null {
    const row = this.byName.get(name);
    return row === undefined ? null : toSettings(row);
  }

  /** In routing order: lower priority first, ties in the order the providers were added. */
  list(): ProviderSettings[] {
    return this.ordered.all().map(toSettings);
  }

  remove(name: string): ProviderSettings {
    return changeConfig(this.db, () => {
      const existing = this.mustGet(name);
      // provider_models rows go with it (ON DELETE CASCADE).
      this.db.prepare(`DELETE FROM providers WHERE name = ?`).run(name);
      return existing;
    });
  }

  update(name: string, patch: ProviderPatch): ProviderSettings {
    return changeConfig(this.db, () => {
      const current = this.mustGet(name);
      const next: NewProvider = { ...current, ...definedOnly(patch) };
      const columns = toColumns(next);
      this.db
        .prepare(
          `UPDATE providers SET type = @type, preset = @preset, base_url = @base_url, models = @models,
             priority = @priority, key_env = @key_env, key_source = @key_source, options = @options
           WHERE name = @name`,
        )
        .run({ name, ...columns });
      // Models discovered at another address or with another adapter say nothing about the new one.
      if (next.baseUrl !== current.baseUrl || next.type !== current.type) {
        this.db.prepare(`DELETE FROM provider_models WHERE provider = ?`).run(name);
      }
      return this.mustGet(name);
    });
  }

  /**
   * Replaces the discovery cache of a provider. The config version moves only when the set changed,
   * so the refresh every server start does not make every process reload for nothing.
   */
  setDiscoveredModels(name: string, models: string[]): void {
    const unique = [...new Set(models)].filter((m) => typeof m === 'string' && m.length > 0).sort();
    this.db
      .transaction(() => {
        this.mustGet(name);
        const before = this.discovered.all(name);
        const changed = before.length !== unique.length || before.some((m, i) => m !== unique[i]);
        const now = Date.now();
        this.db.prepare(`DELETE FROM provider_models WHERE provider = ?`).run(name);
        const insert = this.db.prepare(`INSERT INTO provider_models (provider, model, discovered_at) VALUES (?, ?, ?)`);
        for (const model of unique) insert.run(name, model, now);
        if (changed) bumpConfigVersion(this.db);
      })
      .immediate();
  }

  discoveredModels(name: string): string[] {
    return this.discovered.all(name);
  }

  /** When the provider's models were last discovered, or null if never (or the list was empty). */
  lastDiscoveredAt(name: string): number | null {
    const at = this.db
      .prepare<[string], number | null>(`SELECT MAX(discovered_at) FROM provider_models WHERE provider = ?`)
      .pluck()
      .get(name);
    return at ?? null;
  }

  /** Each provider's served models, in routing order: its fixed list if set, else what it reported. */
  allServedModels(): Map<string, string[]> {
    const discovered = new Map<string, string[]>();
    for (const { provider, model } of this.allDiscovered.all()) {
      let list = discovered.get(provider);
      if (list === undefined) discovered.set(provider, (list = []));
      list.push(model);
    }
    const served = new Map<string, string[]>();
    for (const provider of this.list()) {
      served.set(provider.name, provider.models ?? discovered.get(provider.name) ?? []);
    }
    return served;
  }

  private mustGet(name: string): ProviderSettings {
    const provider = this.get(name);
    if (provider === null) throw new StorageError('provider_not_found', `no provider named "${name}"`);
    return provider;
  }
}

export function checkProviderName(name: unknown): string {
  // `provider/model` splits at the first slash, so a provider name cannot contain one.
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new StorageError(
      'invalid_input',
      'a provider name is 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    );
  }
  return name;
}

export function toColumns(s: NewProvider): ProviderColumns {
  if (!PROVIDER_TYPES.includes(s.type)) {
    throw new StorageError('invalid_input', `a provider type is one of ${PROVIDER_TYPES.join(', ')}`);
  }
  if (!KEY_SOURCES.includes(s.keySource)) {
    throw new StorageError('invalid_input', `a key source is one of ${KEY_SOURCES.join(', ')}`);
  }
  if (s.keySource === 'env' && (typeof s.keyEnv !== 'string' || s.keyEnv === '')) {
    throw new StorageError('invalid_input', 'a provider whose key comes from the environment needs keyEnv');
  }
  if (!Number.isSafeInteger(s.priority)) {
    throw new StorageError('invalid_input', 'a priority is a whole number');
  }
  if (s.models !== null && !(Array.isArray(s.models) && s.models.every((m) => typeof m === 'string' && m.length > 0))) {
    throw new StorageError('invalid_input', 'a fixed model list is a list of model names');
  }
  if (s.options === null || typeof s.options !== 'object' || Array.isArray(s.options)) {
    throw new StorageError('invalid_input', 'provider options are an object');
  }
  checkNoSecretInUrl(s.baseUrl);
  const secretPath = findSecretOption(s.options, 'options');
  if (secretPath !== null) {
    throw new StorageError(
      'secret_in_settings',
      `${secretPath} looks like a credential; provider secrets belong in the OS keychain or an environment variable, never in settings`,
    );
  }
  return {
    type: s.type,
    preset: s.preset ?? null,
    base_url: s.baseUrl,
    models: s.models === null ? null : JSON.stringify([...new Set(s.models)]),
    priority: s.priority,
    key_env: s.keyEnv ?? null,
    key_source: s.keySource,
    options: JSON.stringify(s.options),
  };
}

function checkNoSecretInUrl(baseUrl: string): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new StorageError('invalid_input', `"${baseUrl}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new StorageError('invalid_input', `a base URL uses http or https, not ${url.protocol}`);
  }
  const hasSecretParam = SECRET_QUERY_PARAMS.some((p) => url.searchParams.has(p));
  if (url.username !== '' || url.password !== '' || hasSecretParam) {
    throw new StorageError(
      'secret_in_settings',
      'the base URL carries credentials; provider secrets belong in the OS keychain or an environment variable',
    );
  }
}

function findSecretOption(value: unknown, path: string): string | null {
  if (value === null || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value)) {
    const here = Array.isArray(value) ? `${path}[${k}]` : `${path}.${k}`;
    if (!Array.isArray(value) && SECRET_OPTION_NAME.test(k)) return here;
    const nested = findSecretOption(v, here);
    if (nested !== null) return nested;
  }
  return null;
}

export function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function toSettings(row: ProviderRow): ProviderSettings {
  return {
    name: row.name,
    type: row.type,
    preset: row.preset,
    baseUrl: row.base_url,
    models: row.models === null ? null : parseJson(row, 'models', isStringArray),
    priority: row.priority,
    keyEnv: row.key_env,
    keySource: row.key_source,
    options: parseJson(row, 'options', isPlainObject),
    seq: row.seq,
  };
}

function parseJson<T>(row: ProviderRow, column: 'models' | 'options', guard: (v: unknown) => v is T): T {
  try {
    const parsed: unknown = JSON.parse(row[column] ?? 'null');
    if (guard(parsed)) return parsed;
  } catch {
    // fall through to the error below
  }
  throw new StorageError('corrupt_row', `provider "${row.name}" has unreadable ${column}`);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((m) => typeof m === 'string');
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
