/**
 * Prices the user set (USD per million tokens). They win over the bundled price data, and they are how
 * a key with a budget gets to use a model the bundled data does not know.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { changeConfig } from './config-version.ts';
import { StorageError, type Database } from './db.ts';

/** The rates beyond the four token rates; each absent one falls back as `core/pricing/price.ts` says. */
export interface PriceExtra {
  cacheWrite1hPerMtok?: number;
  audioInputPerMtok?: number;
  audioOutputPerMtok?: number;
  imageInputPerMtok?: number;
  imageOutputPerMtok?: number;
  perMinuteUsd?: number;
  perImageUsd?: number;
  priorityMultiplier?: number;
  flexMultiplier?: number;
  maxOutputTokens?: number;
  tierAbove?: number;
  tierInputPerMtok?: number;
  tierOutputPerMtok?: number;
}

export interface PriceInput {
  inputPerMtok: number;
  outputPerMtok: number;
  /** Null or absent: cache reads cost the input price. */
  cacheReadPerMtok?: number | null;
  /** Null or absent: cache writes cost the input price. */
  cacheWritePerMtok?: number | null;
  extra?: PriceExtra | null;
}

export interface UserPrice {
  model: string;
  inputPerMtok: number;
  outputPerMtok: number;
  cacheReadPerMtok: number | null;
  cacheWritePerMtok: number | null;
  extra: PriceExtra;
  updatedAt: number;
}

export interface PriceRow {
  model: string;
  input_per_mtok: number;
  output_per_mtok: number;
  cache_read_per_mtok: number | null;
  cache_write_per_mtok: number | null;
  extra: string | null;
  updated_at: number;
}

export class PricesRepo {
  private readonly db: Database;
  private readonly byModel: BetterSqlite3.Statement<[string], PriceRow>;
  private readonly all: BetterSqlite3.Statement<[], PriceRow>;

  constructor(db: Database) {
    this.db = db;
    this.byModel = db.prepare(`SELECT * FROM prices WHERE model = ?`);
    this.all = db.prepare(`SELECT * FROM prices ORDER BY model`);
  }

  /** Creates or replaces the price of a model. */
  set(model: string, price: PriceInput): UserPrice {
    const row = toPriceRow(model, price);
    changeConfig(this.db, () => {
      this.db
        .prepare(
          `INSERT INTO prices (model, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, extra, updated_at)
           VALUES (@model, @input_per_mtok, @output_per_mtok, @cache_read_per_mtok, @cache_write_per_mtok, @extra, @updated_at)
           ON CONFLICT (model) DO UPDATE SET
             input_per_mtok = excluded.input_per_mtok, output_per_mtok = excluded.output_per_mtok,
             cache_read_per_mtok = excluded.cache_read_per_mtok, cache_write_per_mtok = excluded.cache_write_per_mtok,
             extra = excluded.extra, updated_at = excluded.updated_at`,
        )
        .run(row);
    });
    return toPrice(row);
  }

  get(model: string): UserPrice | null {
    const row = this.byModel.get(model);
    return row === undefined ? null : toPrice(row);
  }

  list(): UserPrice[] {
    return this.all.all().map(toPrice);
  }

  remove(model: string): void {
    changeConfig(this.db, () => {
      const { changes } = this.db.prepare(`DELETE FROM prices WHERE model = ?`).run(model);
      if (changes === 0) throw new StorageError('price_not_found', `no price set for "${model}"`);
    });
  }
}

function checkPrice(label: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new StorageError('invalid_input', `the ${label} price must be a number of USD per million tokens, 0 or more`);
  }
  return value;
}

function checkExtra(extra: PriceExtra): PriceExtra {
  const out: PriceExtra = {};
  for (const [k, v] of Object.entries(extra) as Array<[keyof PriceExtra, unknown]>) {
    if (v === undefined || v === null) continue;
    out[k] = checkPrice(k, v);
  }
  return out;
}

function parseExtra(text: string | null): PriceExtra {
  if (text === null) return {};
  try {
    const v: unknown = JSON.parse(text);
    if (v === null || typeof v !== 'object') return {};
    const out: PriceExtra = {};
    for (const [k, x] of Object.entries(v)) if (typeof x === 'number' && Number.isFinite(x) && x >= 0) out[k as keyof PriceExtra] = x;
    return out;
  } catch {
    return {};
  }
}

/** The row a price is stored as, checked; both stores write it (SQLite here, PostgreSQL in team mode). */
export function toPriceRow(model: string, price: PriceInput): PriceRow {
  if (typeof model !== 'string' || model.length === 0) {
    throw new StorageError('invalid_input', 'a price needs a model name');
  }
  return {
    model,
    input_per_mtok: checkPrice('input', price.inputPerMtok),
    output_per_mtok: checkPrice('output', price.outputPerMtok),
    cache_read_per_mtok: price.cacheReadPerMtok == null ? null : checkPrice('cache read', price.cacheReadPerMtok),
    cache_write_per_mtok: price.cacheWritePerMtok == null ? null : checkPrice('cache write', price.cacheWritePerMtok),
    extra: price.extra && Object.keys(price.extra).length > 0 ? JSON.stringify(checkExtra(price.extra)) : null,
    updated_at: Date.now(),
  };
}

export function toPrice(row: PriceRow): UserPrice {
  return {
    model: row.model,
    inputPerMtok: row.input_per_mtok,
    outputPerMtok: row.output_per_mtok,
    cacheReadPerMtok: row.cache_read_per_mtok,
    cacheWritePerMtok: row.cache_write_per_mtok,
    extra: parseExtra(row.extra),
    updatedAt: row.updated_at,
  };
}
