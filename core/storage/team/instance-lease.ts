/**
 * An instance's lease in Redis: a key that lives while the instance does (renewed every third of its time to
 * live) and goes away within that time when the instance dies without a word (killed, crashed, cut off). What
 * an instance holds in shared counters (a budget's reservations for its calls in flight) is filed under its
 * lease id, so other instances can tell holds that still stand from holds nobody will ever settle.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** `LEASE_PREFIX + id` is a live instance's lease key. */
export const LEASE_PREFIX = 'gw:lease:';
export const DEFAULT_LEASE_MS = 30_000;

export class InstanceLease {
  readonly #redis: Redis;
  readonly #ttlMs: number;
  #id = newId();
  /** Settled once the current id's key is set (null until first asked for); replaced when a renewal finds the key gone. */
  #held: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  /** Nothing is written before the first `id()`: a command that reserves nothing takes no lease. */
  constructor(redis: Redis, ttlMs = DEFAULT_LEASE_MS) {
    this.#redis = redis;
    this.#ttlMs = ttlMs;
    redis.once('end', () => this.stop());
  }

  /**
   * The id to file holds under, once its key is set. A hold filed under an id whose lease ran out (this instance
   * was cut off from Redis for longer than the lease) may already be dropped by another instance; a new id is
   * taken then, so later holds are not mixed with settlements of dropped ones.
   */
  async id(): Promise<string> {
    if (this.#held === null) {
      this.#held = this.#take();
      if (!this.#closed) {
        this.#timer = setInterval(() => void this.#renew(), Math.max(10, Math.floor(this.#ttlMs / 3)));
        // A lease must never keep a finished process alive; it simply runs out.
        this.#timer.unref();
      }
    }
    await this.#held;
    return this.#id;
  }

  /**
   * A new lease in place of `lost`, whose key Redis no longer has (a restart without persistence, an outage past
   * the lease): found by a reservation before the next renewal would. Callers racing here share one new lease.
   */
  async replace(lost: string): Promise<string> {
    if (this.#id === lost) this.#takeNew();
    return this.id();
  }

  /** Stops renewing and gives the lease up: what this instance still holds is released at once. */
  async release(): Promise<void> {
    const taken = this.#held !== null;
    this.stop();
    if (taken) await this.#redis.del(LEASE_PREFIX + this.#id).catch(() => undefined);
  }

  /** Stops renewing (the connection is gone): the lease runs out by itself. */
  stop(): void {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** A new id in place of one whose key is gone, taken now; `id()` waits for it. */
  #takeNew(): Promise<void> {
    this.#id = newId();
    this.#held = this.#take();
    return this.#held;
  }

  #take(): Promise<void> {
    const taken = this.#redis.set(LEASE_PREFIX + this.#id, '1', 'PX', this.#ttlMs, 'NX').then(() => undefined);
    // Seen by every caller of id() (their call fails, as any command would); never an unhandled rejection.
    taken.catch(() => undefined);
    return taken;
  }

  async #renew(): Promise<void> {
    if (this.#closed) return;
    try {
      const kept = await this.#redis.set(LEASE_PREFIX + this.#id, '1', 'PX', this.#ttlMs, 'XX');
      if (kept === null && !this.#closed) await this.#takeNew();
    } catch {
      // Redis unreachable: the next renewal tries again; meanwhile every command of a call fails on its own.
    }
  }
}

const newId = (): string => randomBytes(8).toString('hex');
