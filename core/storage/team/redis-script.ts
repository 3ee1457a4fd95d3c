/** A Lua script run atomically in Redis: EVALSHA, loading it with EVAL the first time (or after a restart). */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type ScriptArg = string | number;

export function luaScript(lua: string, numberOfKeys: number): (redis: Redis, keys: string[], args: ScriptArg[]) => Promise<unknown> {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (redis, keys, args) => {
    if (keys.length !== numberOfKeys) throw new Error(`script expects ${numberOfKeys} keys, got ${keys.length}`);
    try {
      return await redis.evalsha(sha, numberOfKeys, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return redis.eval(lua, numberOfKeys, ...keys, ...args);
    }
  };
}
