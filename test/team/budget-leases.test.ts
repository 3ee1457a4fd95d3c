/**
 * Team budgets when an instance dies with calls in flight: its holds must not outlive it. Two RedisBudgets
 * on one real Redis (Debian's redis-server), each on a connection of its own, as two gateway instances are.
 * A "crash" is the connection cut without a word: the lease is no longer renewed and runs out.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StoredKey } from '../../core/storage/keys-repo.ts';
import { counterKey, RedisBudgets } from '../../core/storage/team/redis-budgets.ts';
import type { CallQueries } from '../../core/state/gateway-state.ts';
import { redisServerBin, startRedis, teamServersRequired, type RunningServer } from './servers.ts';

const run = redisServerBin() !== null || teamServersRequired();
const LEASE_MS = 400;
const calls = { spendForKey: async () => 0 } as unknown as CallQueries;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let n = 0;
function key(budgetUsd: number): StoredKey {
  n += 1;
  return {
    id: `key_lease_${n}`, name: `lease-${n}`, hash: `h${n}`, prefix: 'sk-gw-test', state: 'active', createdAt: 0, rotatedAt: null, deletedAt: null,
    budgetUsd, budgetPeriod: null, rpm: null, tpm: null, models: null, cassette: null,
  };
}

describe.skipIf(!run)('team budgets: what a dead instance held', () => {
  let server: RunningServer;
  const conns: Redis[] = [];
  const instance = (): { redis: Redis; budgets: RedisBudgets } => {
    const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    conns.push(redis);
    return { redis, budgets: new RedisBudgets(redis, calls, { leaseMs: LEASE_MS }) };
  };
  const refused = async (p: Promise<unknown>): Promise<number | null> =>
    p.then(
      () => null,
      (e: { status?: number }) => e.status ?? -1,
    );

  beforeAll(async () => {
    server = await startRedis();
  }, 60_000);
  afterEach(() => {
    for (const c of conns.splice(0)) c.disconnect();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("counts a live instance's holds, however long its call runs", async () => {
    const a = instance();
    const b = instance();
    const k = key(1);
    const settleA = await a.budgets.reserve(k, 0.6);
    // Longer than the lease: A renews it while it lives.
    await sleep(LEASE_MS * 2.5);
    expect(await refused(b.budgets.reserve(k, 0.6))).toBe(402);
    expect((await b.budgets.snapshot(k))?.reserved).toBeCloseTo(0.6, 10);
    settleA(0.25);
    await sleep(50);
    const snap = await b.budgets.snapshot(k);
    expect(snap?.spent).toBeCloseTo(0.25, 10);
    expect(snap?.reserved).toBe(0);
    // Settled holds leave no field behind.
    expect(Object.keys(await b.redis.hgetall(counterKey(k.id, 0)))).toEqual(['spent']);
  });

  it('drops the holds of an instance that died without a word, once its lease ran out', async () => {
    const a = instance();
    const b = instance();
    const k = key(1);
    await a.budgets.reserve(k, 0.6);
    await a.budgets.reserve(k, 0.3);
    expect(await refused(b.budgets.reserve(k, 0.6))).toBe(402);
    a.redis.disconnect(); // killed: no release, no more renewals
    await sleep(LEASE_MS + 200);
    const settleB = await b.budgets.reserve(k, 0.6);
    expect((await b.budgets.snapshot(k))?.reserved).toBeCloseTo(0.6, 10);
    settleB(0.5);
    await sleep(50);
    expect((await b.budgets.snapshot(k))?.spent).toBeCloseTo(0.5, 10);
    // Spent money stays spent: what remains is $0.50, so $0.60 more is refused.
    expect(await refused(b.budgets.reserve(k, 0.6))).toBe(402);
  });

  it('releases at once what a stopping instance still holds, and never goes below zero when it settles late', async () => {
    const a = instance();
    const b = instance();
    const k = key(1);
    const settleA = await a.budgets.reserve(k, 0.9);
    await a.budgets.close();
    expect((await b.budgets.snapshot(k))?.reserved).toBe(0);
    settleA(0.1);
    await sleep(50);
    const snap = await b.budgets.snapshot(k);
    expect(snap?.spent).toBeCloseTo(0.1, 10);
    expect(snap?.reserved).toBe(0);
    expect(Object.keys(await b.redis.hgetall(counterKey(k.id, 0)))).toEqual(['spent']);
  });

  it('still counts what a gateway from before leases held', async () => {
    const b = instance();
    const k = key(1);
    await b.budgets.snapshot(k);
    await b.budgets.reserve(k, 0); // seeds the counter
    await b.redis.hset(counterKey(k.id, 0), 'reserved', '0.7');
    expect(await refused(b.budgets.reserve(k, 0.5))).toBe(402);
    expect((await b.budgets.snapshot(k))?.reserved).toBeCloseTo(0.7, 10);
  });

  it("keeps holding when Redis lost a live instance's lease key (a restart, an outage past the lease)", async () => {
    // A lease long enough that no renewal comes during the test: the reservation itself must notice.
    const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    conns.push(redis);
    const budgets = new RedisBudgets(redis, calls, { leaseMs: 60_000 });
    const k = key(1);
    await budgets.reserve(k, 0.3);
    for (const lease of await redis.keys('gw:lease:*')) await redis.del(lease);
    // The hold filed under the lost lease is gone with it (as a dead instance's would be); the next ones stand.
    const tries = await Promise.all(Array.from({ length: 10 }, () => refused(budgets.reserve(k, 0.3))));
    expect(tries.filter((r) => r === null)).toHaveLength(3);
    expect(tries.filter((r) => r === 402)).toHaveLength(7);
    expect((await budgets.snapshot(k))?.reserved).toBeCloseTo(0.9, 10);
  });

  it('settles once Redis answers again: the cost counted, the hold gone', async () => {
    const a = instance();
    const b = instance();
    const k = key(1);
    const settle = await a.budgets.reserve(k, 0.5);
    // Redis is out of reach when the call ends: the settlement waits and tries again.
    a.redis.disconnect();
    settle(0.2);
    await sleep(200);
    await a.redis.connect();
    await expect.poll(async () => (await b.budgets.snapshot(k))?.spent, { timeout: 5_000 }).toBeCloseTo(0.2, 10);
    expect((await b.budgets.snapshot(k))?.reserved).toBe(0);
  });

  it('holds 100 concurrent reservations across two instances to the budget', async () => {
    const a = instance();
    const b = instance();
    const k = key(1);
    const tries = Array.from({ length: 100 }, (_, i) => refused((i % 2 === 0 ? a : b).budgets.reserve(k, 0.03)));
    const results = await Promise.all(tries);
    expect(results.filter((r) => r === null)).toHaveLength(33);
    expect(results.filter((r) => r === 402)).toHaveLength(67);
  });
});
