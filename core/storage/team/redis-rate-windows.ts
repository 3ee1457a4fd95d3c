/**
 * RPM and TPM limits shared by every instance of a team: the same sliding 60 s window as the one-process
 * `RateLimiter` (an exact log: requests and token records in two sorted sets per key, scored by time),
 * decided and counted in one Lua script, so three instances together never let a key past its limit.
 * TPM reservations are entries of their own, removed when the call ends; what the call used is added.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { formatDuration } from '../../routing/rate-limiter.ts';
import { systemClock, type Clock } from '../../routing/clock.ts';
import type { RateDecision, RateLimits, RateWindows, TokenReservation } from '../../state/rate-windows.ts';
import { luaScript } from './redis-script.ts';

// KEYS: requests zset, tokens zset. ARGV: now, window, rpm (-1: none), tpm (-1: none), reserve, consume (0/1), id.
// Token members are "id:n". Returns {allowed, wait, requests, tokenSum, lastRequestAt, lastTokenAt} as strings.
const DECIDE = luaScript(
  `
  local now = tonumber(ARGV[1]); local window = tonumber(ARGV[2])
  local rpm = tonumber(ARGV[3]); local tpm = tonumber(ARGV[4])
  local want = tonumber(ARGV[5]); local consume = ARGV[6] == '1'
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  local reqs = redis.call('ZCARD', KEYS[1])
  -- The token log is read only for a key with a TPM limit: it holds every finished call's usage.
  local toks = {}
  if tpm >= 0 then toks = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES') end
  local ns, ts, sum = {}, {}, 0
  for i = 1, #toks, 2 do
    local n = tonumber(string.match(toks[i], ':(%d+)$')) or 0
    ns[#ns + 1] = n; ts[#ts + 1] = tonumber(toks[i + 1]); sum = sum + n
  end
  local wait = 0
  if rpm >= 0 and reqs >= rpm then
    if rpm <= 0 then wait = window else
      local e = redis.call('ZRANGE', KEYS[1], reqs - rpm, reqs - rpm, 'WITHSCORES')
      wait = math.max(wait, tonumber(e[2]) + window - now)
    end
  end
  local reserve = 0
  if tpm > 0 and want > 0 then reserve = math.min(math.ceil(want), tpm) end
  if tpm >= 0 and (sum >= tpm or sum + reserve > tpm) then
    local room = tpm - reserve; local strict = reserve == 0; local w = window
    if not (room < 0 or (strict and room == 0)) then
      local s = sum
      for i = 1, #ns do
        s = s - ns[i]
        if (strict and s < room) or ((not strict) and s <= room) then w = math.max(1, ts[i] + window - now); break end
      end
    end
    wait = math.max(wait, w)
  end
  local allowed = wait == 0
  local lastTok = ts[#ts] or -1
  if consume and allowed and rpm >= 0 then redis.call('ZADD', KEYS[1], now, ARGV[7]); reqs = reqs + 1 end
  if consume and allowed and reserve > 0 then
    redis.call('ZADD', KEYS[2], now, ARGV[7] .. ':' .. reserve); sum = sum + reserve; lastTok = now
  end
  local lastReq = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2] or '-1'
  redis.call('PEXPIRE', KEYS[1], window); redis.call('PEXPIRE', KEYS[2], window)
  return {allowed and '1' or '0', tostring(math.ceil(wait)), tostring(reqs), tostring(sum), tostring(lastReq), tostring(lastTok)}
  `,
  2,
);

interface RedisReservation extends TokenReservation {
  readonly member: string;
}

const requestsKey = (keyId: string) => `gw:rl:${keyId}:req`;
const tokensKey = (keyId: string) => `gw:rl:${keyId}:tok`;

export class RedisRateWindows implements RateWindows {
  readonly windowMs: number;
  readonly #redis: Redis;
  readonly #clock: Clock;
  readonly #onError: (err: unknown) => void;

  constructor(redis: Redis, opts: { clock?: Clock; windowMs?: number; onError?: (err: unknown) => void } = {}) {
    this.#redis = redis;
    this.#clock = opts.clock ?? systemClock;
    this.windowMs = opts.windowMs ?? 60_000;
    this.#onError = opts.onError ?? ((e) => process.emitWarning(`rate-limit update failed: ${String(e)}`));
  }

  check(keyId: string, limits: RateLimits, reserveTokens = 0): Promise<RateDecision> {
    return this.#decide(keyId, limits, true, reserveTokens);
  }

  peek(keyId: string, limits: RateLimits): Promise<RateDecision> {
    return this.#decide(keyId, limits, false, 0);
  }

  release(r: TokenReservation | null): void {
    if (r === null) return;
    const member = (r as RedisReservation).member;
    if (member === undefined) return;
    this.#redis.zrem(tokensKey(r.keyId), member).catch(this.#onError);
  }

  recordTokens(keyId: string, tokens: number): void {
    if (!Number.isFinite(tokens) || tokens <= 0) return;
    const key = tokensKey(keyId);
    this.#redis
      .multi()
      .zadd(key, this.#clock.now(), `${randomUUID()}:${Math.round(Math.min(tokens, 1e9))}`)
      .pexpire(key, this.windowMs)
      .exec()
      .catch(this.#onError);
  }

  async #decide(keyId: string, limits: RateLimits, consume: boolean, reserveTokens: number): Promise<RateDecision> {
    const rpm = limits.rpm ?? null;
    const tpm = limits.tpm ?? null;
    if (rpm === null && tpm === null) return { allowed: true, retryAfterMs: 0, headers: {}, reservation: null };
    const now = this.#clock.now();
    const id = randomUUID();
    const want = Number.isFinite(reserveTokens) && reserveTokens > 0 ? reserveTokens : 0;
    const r = (await DECIDE(this.#redis, [requestsKey(keyId), tokensKey(keyId)], [now, this.windowMs, rpm ?? -1, tpm ?? -1, want, consume ? 1 : 0, id])) as string[];
    const [allowed, wait, requests, tokenSum, lastRequestAt, lastTokenAt] = [r[0] === '1', Number(r[1]), Number(r[2]), Number(r[3]), Number(r[4]), Number(r[5])];
    const reserved = consume && allowed && tpm !== null && tpm > 0 && want > 0;
    const until = (t: number) => (t < 0 ? 0 : Math.max(0, Math.ceil(t + this.windowMs - now)));
    const headers: Record<string, string> = {};
    if (rpm !== null) {
      headers['x-ratelimit-limit-requests'] = String(rpm);
      headers['x-ratelimit-remaining-requests'] = String(Math.max(0, rpm - requests));
      headers['x-ratelimit-reset-requests'] = formatDuration(until(lastRequestAt));
    }
    if (tpm !== null) {
      headers['x-ratelimit-limit-tokens'] = String(tpm);
      headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, tpm - tokenSum));
      headers['x-ratelimit-reset-tokens'] = formatDuration(until(lastTokenAt));
    }
    const reservation: RedisReservation | null = reserved ? { keyId, member: `${id}:${Math.min(Math.ceil(want), tpm ?? 0)}` } : null;
    return { allowed, retryAfterMs: allowed ? 0 : wait, headers, reservation };
  }
}
