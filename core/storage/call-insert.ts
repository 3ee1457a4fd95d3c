/**
 * The `calls` INSERT, binding only the columns a row sets: a column left at its default (no error, no cached or
 * reasoning tokens, no time to first token, no session...) is left out of the statement, so SQLite writes the
 * default itself. Binding a value through better-sqlite3 costs ~0.1-0.2 µs; a plain successful call leaves
 * 7-9 of the 29 columns at their default. One prepared statement per set of columns a row sets, made when
 * first needed (rows come in a few shapes).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from './db.ts';

/** The `calls` columns in the order of `CallValues`. */
export const CALL_COLUMNS = [
  'id', 'time', 'key_id', 'key_name', 'endpoint', 'model_requested', 'model', 'provider', 'status', 'error_type',
  'error_message', 'stream', 'input_tokens', 'output_tokens', 'cached_tokens', 'cache_write_tokens', 'reasoning_tokens',
  'cost_usd', 'pricing', 'price_version', 'latency_ms', 'ttft_ms', 'attempts', 'attempts_json', 'request_body', 'response_body',
  'user_agent', 'session_id', 'replayed',
] as const;
export type CallColumn = (typeof CALL_COLUMNS)[number];
export type CallValues = (string | number | Buffer | null)[];

/** A body may come as UTF-8 bytes (stored-body.ts): stored as TEXT all the same. */
const BODY_COLUMNS: ReadonlySet<CallColumn> = new Set(['request_body', 'response_body']);

/** Columns left out when the row holds their default (the schema's: migrations.ts). */
const DEFAULTS: ReadonlyArray<readonly [CallColumn, 0 | null]> = [
  ['error_type', null],
  ['error_message', null],
  ['stream', 0],
  ['cached_tokens', 0],
  ['cache_write_tokens', 0],
  ['reasoning_tokens', 0],
  ['ttft_ms', null],
  ['session_id', null],
  ['replayed', 0],
];
const OPTIONAL = DEFAULTS.map(([column, value]) => ({ index: CALL_COLUMNS.indexOf(column), value }));
const isOptional = new Set(OPTIONAL.map((o) => o.index));

interface Shape {
  statement: BetterSqlite3.Statement<CallValues, unknown>;
  /** Indexes into `CallValues` of the columns this statement binds, in its order; null when it binds all. */
  bound: number[] | null;
}

export class CallInsert {
  readonly #db: Database;
  readonly #shapes = new Map<number, Shape>();

  constructor(db: Database) {
    this.#db = db;
    // Every column: prepared now, so a schema that lacks one fails when the writer is made, not at its first row.
    this.#shape((1 << OPTIONAL.length) - 1);
  }

  /** Inserts one row; `values` in `CALL_COLUMNS` order. */
  run(values: CallValues): void {
    let set = 0;
    for (let b = 0; b < OPTIONAL.length; b++) {
      const v = values[OPTIONAL[b].index];
      // `==`: a null default also stands for an absent (undefined) value.
      if (OPTIONAL[b].value === null ? v != null : v !== OPTIONAL[b].value) set |= 1 << b;
    }
    const shape = this.#shapes.get(set) ?? this.#shape(set);
    if (shape.bound === null) {
      shape.statement.run(...values);
      return;
    }
    const bound: CallValues = [];
    for (const i of shape.bound) bound.push(values[i]);
    shape.statement.run(...bound);
  }

  #shape(set: number): Shape {
    const optionalSet = new Set(OPTIONAL.filter((_, b) => (set & (1 << b)) !== 0).map((o) => o.index));
    const indexes = CALL_COLUMNS.map((_, i) => i).filter((i) => !isOptional.has(i) || optionalSet.has(i));
    const columns = indexes.map((i) => CALL_COLUMNS[i]);
    const statement = this.#db.prepare<CallValues, unknown>(
      `INSERT INTO calls (${columns.join(', ')}) VALUES (${columns.map((c) => (BODY_COLUMNS.has(c) ? 'CAST(? AS TEXT)' : '?')).join(', ')})`,
    );
    const shape = { statement, bound: indexes.length === CALL_COLUMNS.length ? null : indexes };
    this.#shapes.set(set, shape);
    return shape;
  }
}
