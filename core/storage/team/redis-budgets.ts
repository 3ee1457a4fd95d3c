/**
 * Budgets shared by every instance of a team: one Redis hash per key and budget period holds what the
 * key has `spent` (seeded once from the audit trail in PostgreSQL, then moved by each settlement) and
 * what calls in flight hold, one `r:<lease id>` field per instance (instance-lease.ts). A reservation is
 * one Lua script (check and hold in one atomic step), so 200 concurrent calls over three instances cannot
 * all pass under the same remaining dollar. The script counts only the holds of instances whose lease
 * stands and drops the others': an instance killed with calls in flight would otherwise hold their worst
 * cases until the counter expires (400 days for a total budget), refusing calls the key can afford.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { StoredKey } from '../keys-repo.ts';
import { budgetRefusal, periodStart, reservable, type BudgetHint, type Budgets, type BudgetSnapshot, type SettleBudget } from '../../state/budgets.ts';
import type { CallQueries } from '../../state/gateway-state.ts';
import { DEFAULT_LEASE_MS, InstanceLease, LEASE_PREFIX } from './instance-lease.ts';
import { luaScript } from './redis-script.ts';

// Returns {status, spent, held} as strings: Lua would truncate numbers to integers.
// status: 'seed' (no counter yet), 'no' (refused), 'ok' (held, or only counted when ARGV[2] is 0 and ARGV[1] huge),
// 'lease' (the caller's own lease key is gone: a Redis restart or outage lost it. Its holds would be dropped as
// a dead instance's by the very next reservation, its own included, and every call would pass: it takes a new
// lease and asks again).
// ARGV: budget, estimate, this instance's lease id, the lease key prefix. The lease keys are not among KEYS:
// this needs a single Redis server (or a cluster whose every key shares one slot), as team mode documents.
// `reserved` is where gateways before leases held their calls: still counted, never dropped.
const RESERVE = luaScript(
  `
  if ARGV[3] ~= '' and redis.call('EXISTS', ARGV[4] .. ARGV[3]) == 0 then return {'lease', '0', '0'} end
  local spent = redis.call('HGET', KEYS[1], 'spent')
  if not spent then return {'seed', '0', '0'} end
  local held = 0
  local fields = redis.call('HGETALL', KEYS[1])
  for i = 1, #fields, 2 do
    local f = fields[i]
    if f == 'reserved' then
      held = held + tonumber(fields[i + 1])
    elseif string.sub(f, 1, 2) == 'r:' then
      if redis.call('EXISTS', ARGV[4] .. string.sub(f, 3)) == 1 then held = held + tonumber(fields[i + 1])
      else redis.call('HDEL', KEYS[1], f) end
    end
  end
  local budget = tonumber(ARGV[1])
  local est = tonumber(ARGV[2])
  local committed = tonumber(spent) + held
  if committed >= budget or committed + est > budget then return {'no', spent, tostring(held)} end
  if est > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'r:' .. ARGV[3], ARGV[2]) end
  return {'ok', spent, tostring(held + est)}
  `,
  1,
);

// ARGV: the estimate held, the real cost, the lease id it was held under, the settlement's own key. A hold
// already dropped (its lease ran out) leaves nothing below zero: a field at or under zero is removed. The
// settlement's key makes a retry (its reply lost to a broken connection) count the cost once.
const SETTLE = luaScript(
  `
  if not redis.call('SET', ARGV[4], '1', 'PX', 600000, 'NX') then return 0 end
  local f = 'r:' .. ARGV[3]
  local left = tonumber(redis.call('HINCRBYFLOAT', KEYS[1], f, '-' .. ARGV[1]))
  if left < 1e-12 then redis.call('HDEL', KEYS[1], f) end
  if tonumber(ARGV[2]) > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'spent', ARGV[2]) end
  return 1
  `,
  1,
);

/** Waits before each new try of a failed settlement: ~4 minutes in all. */
const SETTLE_RETRY_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 60_000, 60_000];
const SETTLED_PREFIX = 'gw:settled:';

/** Counts without holding anything: a budget no spend reaches. */
const COUNT_ONLY_BUDGET = 1e300;

/** A period's counter outlives its period by a day; a total budget's is kept 400 days after its last use. */
const TTL_S = { daily: 2 * 86_400, monthly: 33 * 86_400, total: 400 * 86_400 } as const;

export class RedisBudgets implements Budgets {
  readonly #redis: Redis;
  readonly #calls: CallQueries;
  readonly #onError: (err: unknown) => void;
  readonly #seeding = new Map<string, Promise<void>>();
  readonly #lease: InstanceLease;

  constructor(
    redis: Redis,
    calls: CallQueries,
    opts: { onError?: (err: unknown) => void; leaseMs?: number } = {},
  ) {
    this.#redis = redis;
    this.#calls = calls;
    this.#onError = opts.onError ?? ((e) => process.emitWarning(`budget settle failed: ${String(e)}`));
    this.#lease = new InstanceLease(redis, opts.leaseMs ?? DEFAULT_LEASE_MS);
  }

  /** Gives this instance's lease up: whatever its calls still hold is released (a stop, after they settled). */
  close(): Promise<void> {
    return this.#lease.release();
  }

  async reserve(key: StoredKey, worstCase: number, hint?: BudgetHint): Promise<SettleBudget> {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return () => undefined;
    const period = key.budgetPeriod ?? 'total';
    const counter = counterKey(key.id, periodStart(period));
    const estimate = reservable(worstCase);
    let lease = await this.#lease.id();
    let [status, spent, reserved] = await this.#reserve(counter, key.budgetUsd, estimate, lease);
    if (status === 'lease') {
      lease = await this.#lease.replace(lease);
      [status, spent, reserved] = await this.#reserve(counter, key.budgetUsd, estimate, lease);
    }
    if (status === 'seed') {
      // One seed per counter at a time: 200 concurrent first calls read the audit log once, not 200 times.
      let seeding = this.#seeding.get(counter);
      if (!seeding) {
        seeding = this.#seed(counter, key.id, periodStart(period), TTL_S[period]).finally(() => this.#seeding.delete(counter));
        this.#seeding.set(counter, seeding);
      }
      await seeding;
      [status, spent, reserved] = await this.#reserve(counter, key.budgetUsd, estimate, lease);
    }
    if (status !== 'ok') throw budgetRefusal(key, spent, reserved, estimate, hint);
    let settled = false;
    return (actualCost) => {
      if (settled) return;
      settled = true;
      // A cost that is not a finite amount (a broken upstream) must never poison the shared spend.
      const cost = actualCost !== null && Number.isFinite(actualCost) && actualCost > 0 ? actualCost : 0;
      if (estimate === 0 && cost === 0) return;
      this.#settle(counter, [estimate, cost, lease, `${SETTLED_PREFIX}${randomBytes(12).toString('hex')}`], 0);
    };
  }

  /**
   * A settlement that fails (Redis briefly unreachable) is tried again, for a few minutes: dropped, its worst
   * case stayed held while this instance lived and its real cost was never counted, so the key overspent once
   * the hold went.
   */
  #settle(counter: string, args: [number, number, string, string], tried: number): void {
    SETTLE(this.#redis, [counter], args).catch((err: unknown) => {
      if (tried === 0 || tried + 1 >= SETTLE_RETRY_MS.length) this.#onError(err);
      if (tried + 1 >= SETTLE_RETRY_MS.length) return;
      setTimeout(() => this.#settle(counter, args, tried + 1), SETTLE_RETRY_MS[tried]).unref();
    });
  }

  async snapshot(key: StoredKey): Promise<BudgetSnapshot | null> {
    if (key.budgetUsd === null || key.budgetUsd === undefined) return null;
    const start = periodStart(key.budgetPeriod ?? 'total');
    // Holds nothing, so it files nothing under a lease: a read (the CLI, the dashboard) takes none.
    const [status, spent, reserved] = await this.#reserve(counterKey(key.id, start), COUNT_ONLY_BUDGET, 0, '');
    if (status === 'seed') return { spent: await this.#calls.spendForKey(key.id, start), reserved: 0, periodStart: start };
    return { spent, reserved, periodStart: start };
  }

  /** Shared counters are never dropped on one instance's say; `logs purge` leaves money spent as spent. */
  invalidate(): void {}

  async #reserve(counter: string, budget: number, estimate: number, lease: string): Promise<[string, number, number]> {
    const r = (await RESERVE(this.#redis, [counter], [budget, estimate, lease, LEASE_PREFIX])) as [string, string, string];
    return [r[0], Number(r[1]), Number(r[2])];
  }

  /** The first use of a counter reads the key's spend from the audit trail; HSETNX keeps a racing seed out. */
  async #seed(counter: string, keyId: string, since: number, ttlS: number): Promise<void> {
    const spent = await this.#calls.spendForKey(keyId, since);
    await this.#redis.multi().hsetnx(counter, 'spent', String(Number.isFinite(spent) ? spent : 0)).expire(counter, ttlS).exec();
  }
}

export const counterKey = (keyId: string, start: number): string => `gw:budget:${keyId}:${start}`;
