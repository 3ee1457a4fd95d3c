/**
 * The PostgreSQL schema of team mode, as its own numbered migrations (`schema_migrations` holds the
 * version). It mirrors the SQLite schema (`../migrations.ts`, at its version 5) table for table and
 * column for column, so one row mapping serves both. Times are unix ms in BIGINT; JSON stays TEXT.
 * Several instances may start at once: an advisory lock makes one migrate while the others wait.
 */
import type { Pool, PoolClient } from 'pg';
import { withClient } from './pg-pool.ts';

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'initial schema (SQLite schema version 5)',
    sql: `
      CREATE TABLE keys (
        id            TEXT PRIMARY KEY,
        name          TEXT NOT NULL,
        hash          TEXT NOT NULL UNIQUE,
        prefix        TEXT NOT NULL,
        state         TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled', 'deleted')),
        created_at    BIGINT NOT NULL,
        rotated_at    BIGINT,
        deleted_at    BIGINT,
        budget_usd    DOUBLE PRECISION CHECK (budget_usd IS NULL OR budget_usd >= 0),
        budget_period TEXT CHECK (budget_period IN ('total', 'daily', 'monthly')),
        rpm           INTEGER CHECK (rpm IS NULL OR rpm > 0),
        tpm           INTEGER CHECK (tpm IS NULL OR tpm > 0),
        models        TEXT,
        cassette      TEXT,
        seq           BIGSERIAL,
        CHECK ((budget_usd IS NULL) = (budget_period IS NULL))
      );
      CREATE UNIQUE INDEX keys_live_name ON keys (name) WHERE state <> 'deleted';

      -- Non-secret settings only: in team mode a provider's key comes from each server's environment.
      CREATE TABLE providers (
        name       TEXT PRIMARY KEY,
        type       TEXT NOT NULL,
        preset     TEXT,
        base_url   TEXT NOT NULL,
        models     TEXT,
        priority   INTEGER NOT NULL DEFAULT 100,
        key_env    TEXT,
        key_source TEXT NOT NULL CHECK (key_source IN ('env', 'none')),
        options    TEXT NOT NULL DEFAULT '{}',
        seq        INTEGER NOT NULL UNIQUE,
        created_at BIGINT NOT NULL
      );

      CREATE TABLE provider_models (
        provider      TEXT NOT NULL REFERENCES providers (name) ON DELETE CASCADE ON UPDATE CASCADE,
        model         TEXT NOT NULL,
        discovered_at BIGINT NOT NULL,
        PRIMARY KEY (provider, model)
      );

      CREATE TABLE aliases (
        name     TEXT PRIMARY KEY,
        targets  TEXT NOT NULL,
        strategy TEXT NOT NULL DEFAULT 'priority' CHECK (strategy IN ('priority', 'cheapest', 'fastest'))
      );

      CREATE TABLE prices (
        model                TEXT PRIMARY KEY,
        input_per_mtok       DOUBLE PRECISION NOT NULL CHECK (input_per_mtok >= 0),
        output_per_mtok      DOUBLE PRECISION NOT NULL CHECK (output_per_mtok >= 0),
        cache_read_per_mtok  DOUBLE PRECISION CHECK (cache_read_per_mtok IS NULL OR cache_read_per_mtok >= 0),
        cache_write_per_mtok DOUBLE PRECISION CHECK (cache_write_per_mtok IS NULL OR cache_write_per_mtok >= 0),
        extra                TEXT,
        updated_at           BIGINT NOT NULL
      );

      CREATE TABLE meta (k TEXT PRIMARY KEY, v BIGINT NOT NULL);
      INSERT INTO meta (k, v) VALUES ('config_version', 0);

      CREATE TABLE calls (
        seq                BIGSERIAL UNIQUE,   -- insertion order, the tie-break SQLite's rowid gives
        id                 TEXT PRIMARY KEY,
        time               BIGINT NOT NULL,
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
        input_tokens       BIGINT NOT NULL DEFAULT 0,
        output_tokens      BIGINT NOT NULL DEFAULT 0,
        cached_tokens      BIGINT NOT NULL DEFAULT 0,
        cache_write_tokens BIGINT NOT NULL DEFAULT 0,
        reasoning_tokens   BIGINT NOT NULL DEFAULT 0,
        cost_usd           DOUBLE PRECISION,
        pricing            TEXT NOT NULL CHECK (pricing IN ('priced', 'estimated', 'unpriced')),
        price_version      TEXT,
        latency_ms         BIGINT NOT NULL,
        ttft_ms            BIGINT,
        attempts           INTEGER NOT NULL DEFAULT 0,
        attempts_json      TEXT NOT NULL DEFAULT '[]',
        request_body       TEXT,
        response_body      TEXT,
        user_agent         TEXT,
        session_id         TEXT,
        replayed           INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX calls_time ON calls (time);
      CREATE INDEX calls_key_time ON calls (key_id, time) INCLUDE (cost_usd);

      -- Running totals per local day (of the writing server), key and provider, kept by the audit writer.
      CREATE TABLE spend_daily (
        day_start BIGINT NOT NULL,
        key_id    TEXT NOT NULL,
        provider  TEXT NOT NULL,
        requests  BIGINT NOT NULL,
        cost_usd  DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (day_start, key_id, provider)
      );
    `,
  },
  {
    version: 2,
    name: 'admin tokens per person (SQLite schema version 7)',
    sql: `
      CREATE TABLE admin_tokens (
        name       TEXT NOT NULL,
        hash       TEXT NOT NULL UNIQUE,
        prefix     TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
      );
      CREATE UNIQUE INDEX admin_tokens_live_name ON admin_tokens (name) WHERE revoked_at IS NULL;
    `,
  },
];

export const PG_SCHEMA_VERSION: number = PG_MIGRATIONS[PG_MIGRATIONS.length - 1].version;

/** An arbitrary constant: the advisory lock every gateway takes while it migrates. */
const MIGRATION_LOCK = 4_141_015;

/** Applies what the database lacks, each migration in its own transaction; returns the versions applied. */
export function applyPgMigrations(pool: Pool, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  return withClient(pool, async (client) => {
    const applied: number[] = [];
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
      const current = await pgSchemaVersion(client);
      const newest = migrations.at(-1)?.version ?? 0;
      if (current > newest) {
        throw new Error(`the PostgreSQL database has schema version ${current}, but this gateway only knows up to ${newest}: it was migrated by a newer gateway. Upgrade gateway.`);
      }
      for (const m of migrations) {
        if (m.version <= current) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, Date.now()]);
          await client.query('COMMIT');
          applied.push(m.version);
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    }
    return applied;
  });
}

async function pgSchemaVersion(client: PoolClient): Promise<number> {
  const r = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
  return r.rows[0]?.v ?? 0;
}
