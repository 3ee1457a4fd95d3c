/**
 * A team instance told that a key changed (a Redis notice naming its hash) while it cannot read the change
 * (cut from PostgreSQL, not from Redis): calls with that key fail with the state's error (a 503 at the edge)
 * until a reload succeeds, instead of being served as memory had the key. Other keys go on as before.
 */
import type { IncomingMessage } from 'node:http';
import { expect, it } from 'vitest';
import { authenticate, RefusedKey } from '../../core/gateway/auth.ts';
import { LiveConfig } from '../../core/gateway/live-config.ts';
import { hashLocalKey } from '../../core/keys/local-key.ts';
import type { ConfigSnapshot, GatewayState } from '../../core/state/gateway-state.ts';
import type { StoredKey } from '../../core/storage/keys-repo.ts';

const key = (name: string, secret: string, state: StoredKey['state']): StoredKey => ({
  id: `key_${name}`, name, hash: hashLocalKey(secret), prefix: secret.slice(0, 10), state, createdAt: 0, rotatedAt: null, deletedAt: null,
  budgetUsd: null, budgetPeriod: null, rpm: null, tpm: null, models: null, cassette: null,
});
const LEAKED = 'sk-gw-leaked-key-0123456789abcdef';
const OTHER = 'sk-gw-other-key-0123456789abcdefg';
const request = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } }) as unknown as IncomingMessage;
const snap = (keys: StoredKey[], version: number): ConfigSnapshot => ({ version, keys, providers: [], served: new Map(), aliases: [], prices: [] });

it('refuses a key announced as changed while the change cannot be read, and follows the change once it can', async () => {
  let current: ConfigSnapshot | Error = snap([key('leaked', LEAKED, 'active'), key('other', OTHER, 'active')], 1);
  let notify: (changedKeyHash?: string) => void = () => undefined;
  const state = {
    location: 'postgres://db + redis://cache',
    snapshot: async () => {
      if (current instanceof Error) throw current;
      return current;
    },
    configVersion: async () => (current instanceof Error ? Promise.reject(current) : current.version),
    watchConfig: (fn: (changedKeyHash?: string) => void) => {
      notify = fn;
      return () => undefined;
    },
  } as unknown as GatewayState;
  const live = new LiveConfig(state, () => null);
  await live.reload();
  live.startPolling(60_000);
  expect(authenticate(request(LEAKED), live)).toMatchObject({ name: 'leaked' });

  // `keys disable leaked` committed in PostgreSQL, announced over Redis; this instance cannot reach PostgreSQL.
  const cut = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' });
  current = cut;
  notify(hashLocalKey(LEAKED));
  await expect(authenticate(request(LEAKED), live)).rejects.toBe(cut);
  // Keys nobody changed are served from memory as before.
  expect(authenticate(request(OTHER), live)).toMatchObject({ name: 'other' });

  // PostgreSQL is back: the next reload reads the change and the key is refused for what it is.
  current = snap([key('leaked', LEAKED, 'disabled'), key('other', OTHER, 'active')], 2);
  await live.reload();
  expect(() => authenticate(request(LEAKED), live)).toThrow(RefusedKey);
  live.stop();
});
