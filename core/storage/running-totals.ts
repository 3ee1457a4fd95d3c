/**
 * The running totals (`spend_daily`, migration 2, and `usage_hourly`, migration 6), kept by the audit
 * writer in the transaction that inserts the calls: one upsert per (bucket, key, model, provider) a batch
 * touches, instead of the two per call the insert triggers ran (7 µs of the audit thread's ~24 µs per
 * call under load). The team writer keeps its `spend_daily` the same way. Buckets are local hours and
 * local midnights, computed here as the readers compute them (`localHourFloor`, `new Date(y, m, d)`).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { CallRow } from './call-row.ts';
import type { Database } from './db.ts';
import { localHourFloor } from './usage-rollup.ts';

/** A call as stored: the values its `calls` row holds, which the totals must add up to (costUsd null when unpriced). */
export type StoredCall = Pick<
  CallRow,
  'time' | 'keyId' | 'keyName' | 'modelRequested' | 'model' | 'provider' | 'status' | 'inputTokens' | 'outputTokens' | 'cachedTokens' | 'cacheWriteTokens' | 'reasoningTokens' | 'costUsd' | 'pricing'
>;

type DailyValues = [day: number, keyId: string, provider: string, requests: number, cost: number];
type HourlyValues = [
  hour: number, keyId: string, keyName: string, model: string, provider: string, requests: number,
  input: number, output: number, cached: number, cacheWrite: number, reasoning: number, cost: number,
  errors: number, unpriced: number, unpricedOk: number, estimated: number,
];

/** Every zone's offset is a whole number of quarter hours, so a UTC quarter hour lies in one local hour and day. */
const QUARTER_HOUR_MS = 15 * 60_000;

export class RunningTotals {
  private readonly upsertDaily: BetterSqlite3.Statement<DailyValues, unknown>;
  private readonly upsertHourly: BetterSqlite3.Statement<HourlyValues, unknown>;
  private readonly daily = new Map<string, DailyValues>();
  private readonly hourly = new Map<string, HourlyValues>();
  /** The buckets the last call went to: under load, most calls of a batch share them, and need no key built. */
  private lastDay: DailyValues | null = null;
  private lastHour: HourlyValues | null = null;
  private quarter = Number.NaN;
  private hourStart = 0;
  private dayStart = 0;

  constructor(db: Database) {
    this.upsertDaily = db.prepare<DailyValues, unknown>(
      `INSERT INTO spend_daily (day_start, key_id, provider, requests, cost_usd) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (day_start, key_id, provider) DO UPDATE SET requests = requests + excluded.requests, cost_usd = cost_usd + excluded.cost_usd`,
    );
    this.upsertHourly = db.prepare<HourlyValues, unknown>(
      `INSERT INTO usage_hourly VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET requests = requests + excluded.requests, input_tokens = input_tokens + excluded.input_tokens,
         output_tokens = output_tokens + excluded.output_tokens, cached_tokens = cached_tokens + excluded.cached_tokens,
         cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
         reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost_usd = cost_usd + excluded.cost_usd,
         errors = errors + excluded.errors, unpriced = unpriced + excluded.unpriced,
         unpriced_ok = unpriced_ok + excluded.unpriced_ok, estimated = estimated + excluded.estimated`,
    );
  }

  /** Counts one stored call; nothing is written until `write`. */
  add(call: StoredCall): void {
    this.bucketsOf(call.time);
    const keyId = call.keyId ?? '';
    const provider = call.provider ?? '';
    const cost = call.costUsd ?? 0;
    let day = this.lastDay;
    if (day === null || day[0] !== this.dayStart || day[1] !== keyId || day[2] !== provider) {
      const dayId = `${this.dayStart}\u0000${keyId}\u0000${provider}`;
      day = this.daily.get(dayId) ?? null;
      if (day === null) {
        day = [this.dayStart, keyId, provider, 0, 0];
        this.daily.set(dayId, day);
      }
      this.lastDay = day;
    }
    day[3]++;
    day[4] += cost;
    const keyName = call.keyName ?? '';
    const model = call.model ?? call.modelRequested ?? '(none)';
    const error = call.status >= 400 ? 1 : 0;
    const unpriced = call.pricing === 'unpriced' && call.provider !== null ? 1 : 0;
    const unpricedOk = unpriced === 1 && call.status < 400 ? 1 : 0;
    const estimated = call.pricing === 'estimated' ? 1 : 0;
    let hour = this.lastHour;
    if (hour === null || hour[0] !== this.hourStart || hour[1] !== keyId || hour[2] !== keyName || hour[3] !== model || hour[4] !== provider) {
      const hourId = `${this.hourStart}\u0000${keyId}\u0000${keyName}\u0000${model}\u0000${provider}`;
      hour = this.hourly.get(hourId) ?? null;
      if (hour === null) {
        hour = [this.hourStart, keyId, keyName, model, provider, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        this.hourly.set(hourId, hour);
      }
      this.lastHour = hour;
    }
    hour[5]++;
    hour[6] += call.inputTokens;
    hour[7] += call.outputTokens;
    hour[8] += call.cachedTokens;
    hour[9] += call.cacheWriteTokens;
    hour[10] += call.reasoningTokens;
    hour[11] += cost;
    hour[12] += error;
    hour[13] += unpriced;
    hour[14] += unpricedOk;
    hour[15] += estimated;
  }

  /** Adds what was counted to the tables; call it inside the transaction that inserted the calls, then `discard`. */
  write(): void {
    for (const values of this.daily.values()) this.upsertDaily.run(...values);
    for (const values of this.hourly.values()) this.upsertHourly.run(...values);
  }

  /** Forgets what was counted: after `write`, or when the transaction that inserted the calls failed. */
  discard(): void {
    this.daily.clear();
    this.hourly.clear();
    this.lastDay = null;
    this.lastHour = null;
  }

  private bucketsOf(time: number): void {
    const quarter = Math.floor(time / QUARTER_HOUR_MS);
    if (quarter === this.quarter) return;
    this.quarter = quarter;
    this.hourStart = localHourFloor(time);
    const d = new Date(time);
    this.dayStart = new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  }
}
