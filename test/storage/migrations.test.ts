import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, StorageError } from '../../core/storage/db.ts';
import { applyMigrations, MIGRATIONS, readSchemaVersion, SCHEMA_VERSION } from '../../core/storage/migrations.ts';
import { readConfigVersion } from '../../core/storage/config-version.ts';
import { AuditWriter, type CallRow } from '../../core/storage/audit-writer.ts';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gw-migrations-'));
  file = path.join(dir, 'gateway.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const tableNames = (db: BetterSqlite3.Database): string[] =>
  db.prepare<[], string>(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`).pluck().all();

describe('openDatabase', () => {
  it('creates the schema, sets user_version and the pragmas', () => {
    const db = openDatabase(file);
    expect(readSchemaVersion(db)).toBe(SCHEMA_VERSION);
    expect(tableNames(db)).toEqual(['admin_tokens', 'aliases', 'calls', 'keys', 'meta', 'prices', 'provider_models', 'providers', 'spend_daily', 'usage_hourly']);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('auto_vacuum', { simple: true })).toBe(2); // INCREMENTAL
    expect(db.pragma('page_size', { simple: true })).toBe(16384);
    expect(readConfigVersion(db)).toBe(0);
    db.close();
  });

  it('is idempotent: reopening applies nothing and keeps data', () => {
    const first = openDatabase(file);
    first.prepare(`UPDATE meta SET v = 7 WHERE k = 'config_version'`).run();
    first.close();
    const second = openDatabase(file);
    expect(readSchemaVersion(second)).toBe(SCHEMA_VERSION);
    expect(readConfigVersion(second)).toBe(7);
    expect(applyMigrations(second)).toEqual([]);
    second.close();
  });

  it.skipIf(process.platform === 'win32')('creates the file readable only by the user', () => {
    openDatabase(file).close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a database from a newer gateway, with a message saying what to do', () => {
    const db = openDatabase(file);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    let error: unknown;
    try {
      openDatabase(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('schema_too_new');
    expect((error as StorageError).message).toMatch(/newer gateway.*Upgrade gateway/);
  });
});

describe('migrations', () => {
  it('are numbered 1..n without gaps', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it('apply each in its own transaction: a failing one leaves the previous version intact', () => {
    const db = new BetterSqlite3(file);
    const migrations = [
      { version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER);' },
      { version: 2, name: 'two', sql: 'CREATE TABLE b (x INTEGER); CREATE TABLE broken (;' },
    ];
    expect(() => applyMigrations(db, migrations)).toThrow();
    expect(readSchemaVersion(db)).toBe(1);
    expect(tableNames(db)).toEqual(['a']);
    const fixed = [migrations[0], { version: 2, name: 'two', sql: 'CREATE TABLE b (x INTEGER);' }];
    expect(applyMigrations(db, fixed)).toEqual([2]);
    expect(applyMigrations(db, fixed)).toEqual([]);
    expect(readSchemaVersion(db)).toBe(2);
    db.close();
  });
});

describe('migration 8: the running totals move from triggers to the audit writer', () => {
  const call = (id: string, time: number, cost: number): CallRow => ({
    id, time, keyId: 'k1', keyName: 'editor', endpoint: 'chat', modelRequested: 'gpt-4o', model: 'gpt-4o', provider: 'openai', status: 200,
    errorType: null, errorMessage: null, stream: false, inputTokens: 10, outputTokens: 5, cachedTokens: 0, cacheWriteTokens: 0,
    reasoningTokens: 0, costUsd: cost, pricing: 'priced', priceVersion: null, latencyMs: 3, ttftMs: null, attempts: 1, attemptsJson: '[]',
    requestBody: null, responseBody: null,
  });

  it('keeps what the triggers counted and counts every later call once', () => {
    // A file a version-7 gateway wrote: its triggers counted these calls as they went in.
    const old = new BetterSqlite3(file);
    old.pragma('journal_mode = WAL');
    applyMigrations(old, MIGRATIONS.filter((m) => m.version <= 7));
    const insert = old.prepare(`INSERT INTO calls (id, time, key_id, key_name, endpoint, model, provider, status, input_tokens, output_tokens, cost_usd, pricing, latency_ms)
      VALUES (?, ?, 'k1', 'editor', 'chat', 'gpt-4o', 'openai', 200, 10, 5, 0.25, 'priced', 3)`);
    const now = Date.now();
    for (let i = 0; i < 3; i++) insert.run(`old${i}`, now - i * 1000);
    expect(old.prepare(`SELECT requests FROM spend_daily`).pluck().get()).toBe(3);
    old.close();

    const db = openDatabase(file);
    expect(db.prepare<[], string>(`SELECT name FROM sqlite_schema WHERE type = 'trigger'`).pluck().all()).toEqual([]);
    const writer = new AuditWriter(db, { flushIntervalMs: 60_000 });
    for (let i = 0; i < 4; i++) writer.record(call(`new${i}`, now + i, 0.5));
    writer.close();
    const daily = db.prepare(`SELECT TOTAL(requests) AS requests, TOTAL(cost_usd) AS cost FROM spend_daily`).get();
    const hourly = db.prepare(`SELECT TOTAL(requests) AS requests, TOTAL(cost_usd) AS cost, TOTAL(input_tokens) AS input FROM usage_hourly`).get();
    expect(daily).toEqual({ requests: 7, cost: 2.75 });
    expect(hourly).toEqual({ requests: 7, cost: 2.75, input: 70 });
    db.close();
  });
});
