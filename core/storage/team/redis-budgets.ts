/**
 * Budgets shared by every instance of a team: one Redis hash per key and budget period holds what the
 * key has `spent` (seeded once from the audit trail in PostgreSQL, then moved by each settlement) and
 * what calls in flight have `reserved`. A reservation is one Lua script (check and hold in one atomic
 * step), so 200 concurrent calls over three instances cannot all pass under the same remaining dollar.
 */
import type { Redis } from 'ioredis';
import type { StoredKey } from '../keys-repo.ts';
import { budgetRefusal, periodStart, reservable, type BudgetHint, type Budgets, type BudgetSnapshot, type SettleBudget } from '../../state/budgets.ts';
import type { CallQueries } from '../../state/gateway-state.ts';
import { luaScript } from './redis-script.ts';

// Returns {status, spent, reserved} as strings: Lua would truncate numbers to integers.
// status: 'seed' (no counter yet), 'no' (refused), 'ok' (held).
const RESERVE = luaScript(
  `
  local spent = redis.call('HGET', KEYS[1], 'spent')
  if not spent then return {'seed', '0', '0'} end
  local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')
  local budget = tonumber(ARGV[1])
  local est = tonumber(ARGV[2])
  local committed = tonumber(spent) + reserved
  if committed >= budget or committed + est > budget then return {'no', spent, tostring(reserved)} end
  if est > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'reserved', ARGV[2]) end
  return {'ok', spent, tostring(reserved + est)}
  `,
  1,
);

const SETTLE = luaScript(
  `
  local reserved = tonumber(redis.call('HINCRBYFLOAT', KEYS[1], 'reserved', '-' .. ARGV[1]))
  if reserved < 1e-12 then redis.call('HSET', KEYS[1], 'reserved', '0') end
  if tonumber(ARGV[2]) > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'spent', ARGV[2]) end
  return 1
  `,
  1,
);

/** A period's counter outlives its period by a day; a total budget's is kept 400 days after its last use. */
const TTL_S = { daily: 2 * 86_400, monthly: 33 * 86_400, total: 400 * 86_400 } as const;

export class RedisBudgets implements Budgets {
  readonly #redis: Redis;
  readonly #calls: CallQueries;
  readonly #onError: (err: unknown) => void;
  readonly #seeding = new Map<string, Promise<void>>();

  constructor(redis: Redis, calls: CallQueries, onError: (err: unknown) => void = (e) => process.emitWarning(`budget settle failed: ${String(e)}`)) {
    this.#redis = redis;
    this.#calls = calls;
    this.#onError = onError;
  }

  async reserve(key: StoredKey, worstCase: number, hint?: BudgetHint): Promise<SettleBudget> {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return () => undefined;
    const period = key.budgetPeriod ?? 'total';
    const counter = counterKey(key.id, periodStart(period));
    const estimate = reservable(worstCase);
    let [status, spent, reserved] = await this.#reserve(counter, key.budgetUsd, estimate);
    if (status === 'seed') {
      // One seed per counter at a time: 200 concurrent first calls read the audit log once, not 200 times.
      let seeding = this.#seeding.get(counter);
      if (!seeding) {
        seeding = this.#seed(counter, key.id, periodStart(period), TTL_S[period]).finally(() => this.#seeding.delete(counter));
        this.#seeding.set(counter, seeding);
      }
      await seeding;
      [status, spent, reserved] = await this.#reserve(counter, key.budgetUsd, estimate);
    }
    if (status !== 'ok') throw budgetRefusal(key, spent, reserved, estimate, hint);
    let settled = false;
    return (actualCost) => {
      if (settled) return;
      settled = true;
      // A cost that is not a finite amount (a broken upstream) must never poison the shared spend.
      const cost = actualCost !== null && Number.isFinite(actualCost) && actualCost > 0 ? actualCost : 0;
      if (estimate === 0 && cost === 0) return;
      SETTLE(this.#redis, [counter], [estimate, cost]).catch(this.#onError);
    };
  }

  async snapshot(key: StoredKey): Promise<BudgetSnapshot | null> {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return null;
    const start = periodStart(key.budgetPeriod ?? 'total');
    const h = await this.#redis.hmget(counterKey(key.id, start), 'spent', 'reserved');
    const spent = h[0] === null ? await this.#calls.spendForKey(key.id, start) : Number(h[0]);
    return { spent, reserved: Number(h[1] ?? 0), periodStart: start };
  }

  /** Shared counters are never dropped on one instance's say; `logs purge` leaves money spent as spent. */
  invalidate(): void {}

  async #reserve(counter: string, budget: number, estimate: number): Promise<[string, number, number]> {
    const r = (await RESERVE(this.#redis, [counter], [budget, estimate])) as [string, string, string];
    return [r[0], Number(r[1]), Number(r[2])];
  }

  /** The first use of a counter reads the key's spend from the audit trail; HSETNX keeps a racing seed out. */
  async #seed(counter: string, keyId: string, since: number, ttlS: number): Promise<void> {
    const spent = await this.#calls.spendForKey(keyId, since);
    await this.#redis.multi().hsetnx(counter, 'spent', String(Number.isFinite(spent) ? spent : 0)).hsetnx(counter, 'reserved', '0').expire(counter, ttlS).exec();
  }
}

export const counterKey = (keyId: string, start: number): string => `gw:budget:${keyId}:${start}`;
