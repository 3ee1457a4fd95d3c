/**
 * Team mode's audit writer: rows are queued on the request path (O(1), no I/O) and written to
 * PostgreSQL in multi-row INSERTs at least every 200 ms, with the day's running totals
 * (`spend_daily`) in the same transaction. `close()` writes what is queued; `drain()` waits for it.
 * Every instance writes into the same `calls` table. While PostgreSQL cannot be reached (a restart), rows
 * wait in order and are written when it is back (retries 1 s apart, then up to 30 s; `ON CONFLICT DO
 * NOTHING` makes a retry of a batch whose commit did land harmless); only a row PostgreSQL refuses for its
 * content, or one past the 50,000 held, is dropped, and said so.
 */
import type { AuditWriterOptions, AuditWriterStats, CallRow, CallRowListener } from '../audit-writer.ts';
import { MAX_BODY_BYTES } from '../audit-writer.ts';
import { storedBody } from '../stored-body.ts';
import type { AuditSink } from '../threaded-audit-writer.ts';
import { inTransaction, type Pool } from './pg-pool.ts';
import { isPgConnectionFailure } from './unreachable.ts';

const COLUMNS = [
  'id', 'time', 'key_id', 'key_name', 'endpoint', 'model_requested', 'model', 'provider', 'status', 'error_type',
  'error_message', 'stream', 'input_tokens', 'output_tokens', 'cached_tokens', 'cache_write_tokens', 'reasoning_tokens',
  'cost_usd', 'pricing', 'price_version', 'latency_ms', 'ttft_ms', 'attempts', 'attempts_json', 'request_body', 'response_body',
  'user_agent', 'session_id', 'replayed',
] as const;

const FLUSH_MS = 200;
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;
const MAX_BATCH = 500;
const MAX_QUEUE = 50_000;

type Value = string | number | null;

export class PgAuditWriter implements AuditSink {
  readonly #pool: Pool;
  readonly #onError: (error: unknown) => void;
  readonly #listeners = new Set<CallRowListener>();
  #queue: CallRow[] = [];
  #timer: NodeJS.Timeout | null = null;
  /** Set while PostgreSQL is away: the next try, `#retryMs` after the last failed one. */
  #retry: NodeJS.Timeout | null = null;
  #retryMs = 0;
  #writing: Promise<void> = Promise.resolve();
  #closed = false;
  readonly #counters = { written: 0, transactions: 0, dropped: 0 };

  constructor(pool: Pool, options: AuditWriterOptions = {}) {
    this.#pool = pool;
    this.#onError = options.onError ?? ((error) => process.emitWarning(`audit write failed: ${String(error)}`));
  }

  record(row: CallRow): void {
    if (this.#closed || this.#queue.length >= MAX_QUEUE) {
      this.#counters.dropped++;
      this.#onError(new Error(this.#closed ? `audit writer closed; call ${row.id} not recorded` : `audit queue full; call ${row.id} not recorded`));
      return;
    }
    this.#queue.push(row);
    for (const listener of this.#listeners) {
      try {
        listener(row);
      } catch (error) {
        this.#onError(error);
      }
    }
    if (this.#timer === null && this.#retry === null) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.flush();
      }, FLUSH_MS);
      this.#timer.unref();
    }
  }

  onRow(listener: CallRowListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts writing what is queued (in order, after any write under way); returns how many rows that is. */
  flush(): number {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#retry !== null) {
      clearTimeout(this.#retry);
      this.#retry = null;
    }
    const rows = this.#queue;
    if (rows.length === 0) return 0;
    this.#queue = [];
    this.#writing = this.#writing.then(() => this.#write(rows));
    return rows.length;
  }

  /** Resolves when every row recorded so far is written (or its write failed and was reported). */
  async drain(): Promise<void> {
    this.flush();
    await this.#writing;
  }

  close(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
  }

  stats(): AuditWriterStats {
    return { queued: this.#queue.length, ...this.#counters };
  }

  async #write(rows: CallRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += MAX_BATCH) {
      const batch = rows.slice(i, i + MAX_BATCH);
      try {
        await this.#insert(batch);
        this.#retryMs = 0;
      } catch (error) {
        this.#onError(error);
        if (isPgConnectionFailure(error)) {
          this.#away(rows.slice(i));
          return;
        }
        // Refused for its content: row by row, so one bad row costs only itself.
        for (let j = 0; j < batch.length; j++) {
          try {
            await this.#insert([batch[j]]);
          } catch (rowError) {
            if (isPgConnectionFailure(rowError)) {
              this.#away(rows.slice(i + j));
              return;
            }
            this.#counters.dropped++;
            this.#onError(rowError);
          }
        }
      }
    }
  }

  /** PostgreSQL is away: `rows` wait for it, in order, ahead of newer ones; a closing writer can only count them lost. */
  #away(rows: CallRow[]): void {
    if (this.#closed) {
      this.#counters.dropped += rows.length;
      this.#onError(new Error(`PostgreSQL unreachable while stopping: ${rows.length} audit rows not recorded`));
      return;
    }
    this.#queue = rows.concat(this.#queue);
    this.#retryLater();
  }

  #retryLater(): void {
    this.#retryMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, this.#retryMs * 2));
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.flush();
    }, this.#retryMs);
    // Held rows must not keep a finished process alive: a stop writes (or reports) them through close().
    this.#retry.unref();
  }

  async #insert(batch: CallRow[]): Promise<void> {
    await inTransaction(this.#pool, async (c) => {
      const values: Value[] = [];
      const tuples = batch.map((row) => {
        const v = rowValues(row);
        const base = values.length;
        values.push(...v);
        return `(${v.map((_, j) => `$${base + j + 1}`).join(', ')})`;
      });
      const inserted = await c.query<{ id: string }>(`INSERT INTO calls (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT (id) DO NOTHING RETURNING id`, values);
      // Only rows new to the table move the totals: a retried batch whose first commit did land adds nothing twice.
      const fresh = new Set(inserted.rows.map((r) => r.id));
      const totals = dailyTotals(fresh.size === batch.length ? batch : batch.filter((r) => fresh.has(r.id)));
      if (totals.length === 0) return;
      await c.query(
        `INSERT INTO spend_daily (day_start, key_id, provider, requests, cost_usd)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::float8[])
         ON CONFLICT (day_start, key_id, provider) DO UPDATE SET requests = spend_daily.requests + excluded.requests, cost_usd = spend_daily.cost_usd + excluded.cost_usd`,
        [totals.map((t) => t.day), totals.map((t) => t.key), totals.map((t) => t.provider), totals.map((t) => t.requests), totals.map((t) => t.cost)],
      );
    });
    this.#counters.written += batch.length;
    this.#counters.transactions++;
  }
}

// PostgreSQL text cannot hold NUL, which a binary upload's body may: it is stored as U+FFFD.
function cap(body: string | Uint8Array | null, secrets: readonly string[] | undefined, total?: number): string | null {
  const stored = storedBody(body, secrets, MAX_BODY_BYTES, total);
  return stored === null ? null : (typeof stored === 'string' ? stored : stored.toString('utf8')).replaceAll('\u0000', '\uFFFD');
}

function rowValues(r: CallRow): Value[] {
  return [
    r.id, r.time, r.keyId, r.keyName, r.endpoint, r.modelRequested, r.model, r.provider, r.status, r.errorType,
    r.errorMessage?.replaceAll('\u0000', '\uFFFD') ?? null, r.stream ? 1 : 0, r.inputTokens, r.outputTokens, r.cachedTokens, r.cacheWriteTokens, r.reasoningTokens,
    finiteOrNull(r.costUsd), r.pricing, r.priceVersion, Math.round(r.latencyMs), r.ttftMs === null ? null : Math.round(r.ttftMs), r.attempts, r.attemptsJson,
    cap(r.requestBytes ?? r.requestBody, r.bodySecrets, r.requestBytesTotal), cap(r.responseBody, r.bodySecrets), r.userAgent ?? null, r.sessionId ?? null, r.replayed ? 1 : 0,
  ];
}

const finiteOrNull = (n: number | null): number | null => (n !== null && Number.isFinite(n) ? n : null);

/** The batch's spend per local day (of this server), key and provider, as the SQLite writer keeps it (running-totals.ts). */
function dailyTotals(rows: CallRow[]): Array<{ day: number; key: string; provider: string; requests: number; cost: number }> {
  const by = new Map<string, { day: number; key: string; provider: string; requests: number; cost: number }>();
  for (const r of rows) {
    const d = new Date(r.time);
    const day = new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
    const key = r.keyId ?? '';
    const provider = r.provider ?? '';
    const id = `${day}\u0000${key}\u0000${provider}`;
    let t = by.get(id);
    if (!t) by.set(id, (t = { day, key, provider, requests: 0, cost: 0 }));
    t.requests++;
    t.cost += finiteOrNull(r.costUsd) ?? 0;
  }
  return [...by.values()];
}
