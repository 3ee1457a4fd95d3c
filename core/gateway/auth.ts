/** Local key authentication: a SHA-256 lookup in the live key table, no I/O on the hot path. */
import type { IncomingMessage } from 'node:http';
import { GatewayError, invalidApiKey } from '../errors.ts';
import { hashLocalKey } from '../keys/local-key.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import type { LiveConfig } from './live-config.ts';
import { andThen, type Awaitable } from '../state/awaitable.ts';

export function bearerToken(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1].trim();
  }
  // Anthropic-style clients send `x-api-key`.
  const x = req.headers['x-api-key'];
  return typeof x === 'string' && x.length > 0 ? x.trim() : null;
}

/**
 * The hashes of the tokens seen lately. SHA-256 of a token was ~1.4 µs of every call under load; a tool sends the
 * same token every time. Only the hash is looked up (a revoked key is gone from the key table whatever this
 * holds), and the map is emptied when full, so tokens that match nothing cannot grow it.
 */
const recentHashes = new Map<string, string>();
const RECENT_HASHES_MAX = 256;

function tokenHash(token: string): string {
  let hash = recentHashes.get(token);
  if (hash === undefined) {
    hash = hashLocalKey(token);
    if (recentHashes.size >= RECENT_HASHES_MAX) recentHashes.clear();
    recentHashes.set(token, hash);
  }
  return hash;
}

const mask = (k: string): string => (k.length <= 12 ? '***' : `${k.slice(0, 8)}***${k.slice(-4)}`);

/** Synchronous for every key in memory; a key unknown to it is looked up in the state (a promise in team mode). */
export function authenticate(req: IncomingMessage, live: LiveConfig): Awaitable<StoredKey> {
  const token = bearerToken(req);
  if (!token) {
    throw invalidApiKey(
      "You didn't provide an API key. Send your gateway key as `Authorization: Bearer sk-gw-...`; create one with `gateway keys create --name NAME`.",
    );
  }
  const hash = tokenHash(token);
  const known = live.keysByHash.get(hash);
  if (known) {
    // A change to this key was announced: the reload that reads it decides (it fails while the state is away).
    const changing = live.changingKeys.size === 0 ? undefined : live.changingKeys.get(hash);
    if (changing === undefined) return usable(known);
    return changing.then(() => servable(live.keysByHash.get(hash), token));
  }
  return andThen(live.recheckUnknownKey(hash), (key) => servable(key, token));
}

/** The key a token names, if any and if it may be used. */
function servable(key: StoredKey | undefined, token: string): StoredKey {
  if (!key) throw invalidApiKey(`Incorrect API key provided: ${mask(token)}. Keys are listed by \`gateway keys list\`.`);
  return usable(key);
}

/** A 401 for a key the gateway knows but will not serve (disabled or deleted): the audit row still names it. */
export class RefusedKey extends GatewayError {
  readonly key: StoredKey;
  constructor(key: StoredKey, message: string) {
    super({ status: 401, type: 'invalid_api_key', code: 'invalid_api_key', message });
    this.key = key;
  }
}

function usable(key: StoredKey): StoredKey {
  if (key.state === 'disabled') throw new RefusedKey(key, `The key "${key.name}" is disabled. Enable it with \`gateway keys enable ${key.name}\`.`);
  if (key.state === 'deleted') throw new RefusedKey(key, `The key "${key.name}" was deleted. Create a new one with \`gateway keys create --name NAME\`.`);
  return key;
}
