/**
 * The schema, as numbered migrations. Migration N brings a database from `user_version` N-1 to N.
 * Append new migrations; never edit one that has shipped (existing files already ran it).
 */
import type BetterSqlite3 from 'better-sqlite3';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE keys (
        id            TEXT PRIMARY KEY,
        name          TEXT NOT NULL,
        hash          TEXT NOT NULL UNIQUE,   -- hex sha256 of the full secret; the secret is never stored
        prefix        TEXT NOT NULL,          -- first 10 characters, for display
        state         TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled', 'deleted')),
        created_at    INTEGER NOT NULL,
        rotated_at    INTEGER,
        deleted_at    INTEGER,
        budget_usd    REAL CHECK (budget_usd IS NULL OR budget_usd >= 0),
        budget_period TEXT CHECK (budget_period IN ('total', 'daily', 'monthly')),
        rpm           INTEGER CHECK (rpm IS NULL OR rpm > 0),
        tpm           INTEGER CHECK (tpm IS NULL OR tpm > 0),
        models        TEXT,                   -- JSON array allow-list, NULL = any model
        CHECK ((budget_usd IS NULL) = (budget_period IS NULL))
      ) STRICT;
      -- Deleted keys stay for the audit trail, so a name is unique only among the others.
      CREATE UNIQUE INDEX keys_live_name ON keys (name) WHERE state <> 'deleted';

      -- Non-secret settings only: provider keys live in the OS keychain or an env var.
      CREATE TABLE providers (
        name       TEXT PRIMARY KEY,
        type       TEXT NOT NULL,
        preset     TEXT,
        base_url   TEXT NOT NULL,
        models     TEXT,                      -- JSON array, NULL = discover from the provider
        priority   INTEGER NOT NULL DEFAULT 100,
        key_env    TEXT,
        key_source TEXT NOT NULL CHECK (key_source IN ('keychain', 'env', 'none')),
        options    TEXT NOT NULL DEFAULT '{}', -- JSON object
        seq        INTEGER NOT NULL UNIQUE,   -- insertion order, breaks priority ties
        created_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE provider_models (
        provider      TEXT NOT NULL REFERENCES providers (name) ON DELETE CASCADE ON UPDATE CASCADE,
        model         TEXT NOT NULL,
        discovered_at INTEGER NOT NULL,
        PRIMARY KEY (provider, model)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE aliases (
        name     TEXT PRIMARY KEY,
        targets  TEXT NOT NULL,               -- JSON array of {provider, model}, in order
        strategy TEXT NOT NULL DEFAULT 'priority' CHECK (strategy IN ('priority', 'cheapest', 'fastest'))
      ) STRICT;

      -- Prices the user set; they take precedence over the bundled price data.
      CREATE TABLE prices (
        model                TEXT PRIMARY KEY,
        input_per_mtok       REAL NOT NULL CHECK (input_per_mtok >= 0),
        output_per_mtok      REAL NOT NULL CHECK (output_per_mtok >= 0),
        cache_read_per_mtok  REAL CHECK (cache_read_per_mtok IS NULL OR cache_read_per_mtok >= 0),
        cache_write_per_mtok REAL CHECK (cache_write_per_mtok IS NULL OR cache_write_per_mtok >= 0),
        updated_at           INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE meta (
        k TEXT PRIMARY KEY,
        v ANY
      ) STRICT;
      INSERT INTO meta (k, v) VALUES ('config_version', 0);

      -- One row per call. No foreign key to keys: an audit write must never fail on a key's state.
      CREATE TABLE calls (
        id                 TEXT PRIMARY KEY,  -- the x-request-id
        time               INTEGER NOT NULL,  -- unix ms
        key_id             TEXT,
        key_name           TEXT,
        endpoint           TEXT NOT NULL,
        model_requested    TEXT,
        model              TEXT,
        provider           TEXT,
        status             INTEGER NOT NULL,
        error_type         TEXT,
        error_message      TEXT,
        stream             INTEGER NOT NULL DEFAULT 0,
        input_tokens       INTEGER NOT NULL DEFAULT 0,
        output_tokens      INTEGER NOT NULL DEFAULT 0,
        cached_tokens      INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
        cost_usd           REAL,
        pricing            TEXT NOT NULL CHECK (pricing IN ('priced', 'estimated', 'unpriced')),
        price_version      TEXT,
        latency_ms         INTEGER NOT NULL,
        ttft_ms            INTEGER,
        attempts           INTEGER NOT NULL DEFAULT 0,
        attempts_json      TEXT NOT NULL DEFAULT '[]',
        request_body       TEXT,
        response_body      TEXT
      ) STRICT;
      CREATE INDEX calls_time ON calls (time);
      -- Covers budget checks (SUM(cost_usd) for one key since a time) without touching the table.
      CREATE INDEX calls_key_time ON calls (key_id, time, cost_usd);
    `,
  },
  {
    version: 2,
    name: 'running spend totals per day, key and provider',
    sql: `
      -- Dashboards read these instead of scanning the month's calls: the same cost at 1M rows as at 0.
      -- Kept by a trigger, so whoever inserts a call keeps them right; retention does not subtract
      -- (money spent stays spent when old log rows go).
      CREATE TABLE spend_daily (
        day_start INTEGER NOT NULL,          -- local midnight of the call's day, unix ms
        key_id    TEXT NOT NULL,             -- '' for calls without a valid key
        provider  TEXT NOT NULL,             -- '' for calls that reached no provider
        requests  INTEGER NOT NULL,
        cost_usd  REAL NOT NULL,
        PRIMARY KEY (day_start, key_id, provider)
      ) STRICT, WITHOUT ROWID;
      CREATE TRIGGER calls_spend_daily AFTER INSERT ON calls BEGIN
        INSERT INTO spend_daily (day_start, key_id, provider, requests, cost_usd)
        VALUES (CAST(strftime('%s', NEW.time / 1000, 'unixepoch', 'localtime', 'start of day', 'utc') AS INTEGER) * 1000,
                COALESCE(NEW.key_id, ''), COALESCE(NEW.provider, ''), 1, COALESCE(NEW.cost_usd, 0))
        ON CONFLICT (day_start, key_id, provider) DO UPDATE SET requests = requests + 1, cost_usd = cost_usd + excluded.cost_usd;
      END;
      INSERT INTO spend_daily (day_start, key_id, provider, requests, cost_usd)
        SELECT CAST(strftime('%s', time / 1000, 'unixepoch', 'localtime', 'start of day', 'utc') AS INTEGER) * 1000,
               COALESCE(key_id, ''), COALESCE(provider, ''), COUNT(*), TOTAL(cost_usd)
        FROM calls GROUP BY 1, 2, 3;
    `,
  },
  {
    version: 3,
    name: 'calls: user agent and agent session id',
    // Who called: the client's user agent, and Claude Code's session id (groups an agent session's calls).
    sql: `
      ALTER TABLE calls ADD COLUMN user_agent TEXT;
      ALTER TABLE calls ADD COLUMN session_id TEXT;
    `,
  },
  {
    version: 4,
    name: 'user prices: every kind of rate',
    sql: `
      -- JSON of the rates beyond input/output/cache (1-hour cache writes, audio and image tokens,
      -- per minute, per image, service-tier multipliers, a long-context tier, the output limit).
      ALTER TABLE prices ADD COLUMN extra TEXT;
    `,
  },
  {
    version: 5,
    name: 'cassettes: a key may record or replay on its own; calls answered from a cassette are marked',
    sql: `
      -- MODE:DIR (record, replay or replay-or-record), or NULL for the gateway's own setting.
      ALTER TABLE keys ADD COLUMN cassette TEXT;
      ALTER TABLE calls ADD COLUMN replayed INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 6,
    name: 'running usage totals per local hour, key, model and provider',
    sql: `
      -- \`gateway usage\`, /admin/usage and the dashboard's charts read these instead of the calls table, so
      -- they cost the same at 1M rows as at 0. Buckets are local hours (a local day is whole hours in
      -- every time zone, half-hour ones too); a range that starts or ends inside an hour reads that hour's
      -- calls from the table (core/storage/usage-rollup.ts). Like spend_daily, kept by a trigger and not
      -- subtracted by retention.
      CREATE TABLE usage_hourly (
        hour_start         INTEGER NOT NULL,   -- unix ms of the local hour's start
        key_id             TEXT NOT NULL,      -- '' for calls without a valid key
        key_name           TEXT NOT NULL,      -- the key's name at the time ('' without a key)
        model              TEXT NOT NULL,      -- COALESCE(model, model_requested, '(none)')
        provider           TEXT NOT NULL,      -- '' for calls that reached no provider
        requests           INTEGER NOT NULL,
        input_tokens       INTEGER NOT NULL,
        output_tokens      INTEGER NOT NULL,
        cached_tokens      INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        reasoning_tokens   INTEGER NOT NULL,
        cost_usd           REAL NOT NULL,
        errors             INTEGER NOT NULL,   -- status >= 400
        unpriced           INTEGER NOT NULL,   -- reached a provider, no price
        unpriced_ok        INTEGER NOT NULL,   -- the same, and succeeded
        estimated          INTEGER NOT NULL,
        PRIMARY KEY (hour_start, key_id, key_name, model, provider)
      ) STRICT, WITHOUT ROWID;
      CREATE TRIGGER calls_usage_hourly AFTER INSERT ON calls BEGIN
        INSERT INTO usage_hourly VALUES (
          (NEW.time / 1000 - CAST(strftime('%s', NEW.time / 1000, 'unixepoch', 'localtime') AS INTEGER) % 3600) * 1000,
          COALESCE(NEW.key_id, ''), COALESCE(NEW.key_name, ''), COALESCE(NEW.model, NEW.model_requested, '(none)'),
          COALESCE(NEW.provider, ''), 1, NEW.input_tokens, NEW.output_tokens, NEW.cached_tokens, NEW.cache_write_tokens,
          NEW.reasoning_tokens, COALESCE(NEW.cost_usd, 0), NEW.status >= 400,
          NEW.pricing = 'unpriced' AND NEW.provider IS NOT NULL,
          NEW.pricing = 'unpriced' AND NEW.provider IS NOT NULL AND NEW.status < 400, NEW.pricing = 'estimated')
        ON CONFLICT DO UPDATE SET requests = requests + 1, input_tokens = input_tokens + excluded.input_tokens,
          output_tokens = output_tokens + excluded.output_tokens, cached_tokens = cached_tokens + excluded.cached_tokens,
          cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
          reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost_usd = cost_usd + excluded.cost_usd,
          errors = errors + excluded.errors, unpriced = unpriced + excluded.unpriced,
          unpriced_ok = unpriced_ok + excluded.unpriced_ok, estimated = estimated + excluded.estimated;
      END;
      INSERT INTO usage_hourly
        SELECT (time / 1000 - CAST(strftime('%s', time / 1000, 'unixepoch', 'localtime') AS INTEGER) % 3600) * 1000,
               COALESCE(key_id, ''), COALESCE(key_name, ''), COALESCE(model, model_requested, '(none)'),
               COALESCE(provider, ''), COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cached_tokens),
               SUM(cache_write_tokens), SUM(reasoning_tokens), TOTAL(cost_usd), SUM(status >= 400),
               SUM(pricing = 'unpriced' AND provider IS NOT NULL),
               SUM(pricing = 'unpriced' AND provider IS NOT NULL AND status < 400), SUM(pricing = 'estimated')
        FROM calls GROUP BY 1, 2, 3, 4, 5;
    `,
  },
  {
    version: 7,
    name: 'admin tokens per person',
    sql: `
      -- A shared gateway's administrators, one token each; only the SHA-256 of the token is kept.
      -- Revoked tokens stay (with revoked_at) so the audit trail keeps its names; a name is unique among live ones.
      CREATE TABLE admin_tokens (
        name       TEXT NOT NULL,
        hash       TEXT NOT NULL UNIQUE,
        prefix     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT;
      CREATE UNIQUE INDEX admin_tokens_live_name ON admin_tokens (name) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 8,
    name: 'running totals kept by the audit writer, per batch',
    sql: `
      -- The writer adds each batch's calls to spend_daily and usage_hourly in the transaction that inserts
      -- them (core/storage/running-totals.ts): one upsert per bucket a batch touches, not two per call.
      DROP TRIGGER calls_spend_daily;
      DROP TRIGGER calls_usage_hourly;
    `,
  },
];

/** The newest schema this code knows. */
export const SCHEMA_VERSION: number = MIGRATIONS.length === 0 ? 0 : MIGRATIONS[MIGRATIONS.length - 1].version;

export function readSchemaVersion(db: BetterSqlite3.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Applies every migration newer than the file, each in its own IMMEDIATE transaction together with its
 * `user_version` bump, so a crash leaves the file at a whole version. The version is re-read inside
 * the transaction: when two processes open a fresh file at once, the second one skips what the first
 * applied instead of failing on "table already exists". Returns the versions applied.
 */
export function applyMigrations(db: BetterSqlite3.Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const applied: number[] = [];
  for (const migration of migrations) {
    if (readSchemaVersion(db) >= migration.version) continue;
    const apply = db.transaction(() => {
      const current = readSchemaVersion(db);
      if (current >= migration.version) return;
      if (current !== migration.version - 1) {
        throw new Error(`migration ${migration.version} expects schema version ${migration.version - 1}, found ${current}`);
      }
      db.exec(migration.sql);
      // PRAGMA takes no bound parameters; the version is an integer from our own table.
      db.pragma(`user_version = ${Math.trunc(migration.version)}`);
      applied.push(migration.version);
    });
    apply.immediate();
  }
  return applied;
}
