/**
 * Local API keys: the `sk-gw-...` secrets the gateway hands to each tool. Only their SHA-256 hash is
 * ever stored; the secret itself is shown once and then exists only in the tool that uses it.
 */
import { hash, randomBytes } from 'node:crypto';

export const LOCAL_KEY_PREFIX = 'sk-gw-';
/** 40 base62 characters carry ~238 bits of entropy, well above the 32-character minimum of the format. */
export const LOCAL_KEY_RANDOM_LENGTH = 40;
/** How many leading characters of a secret may be stored and shown to tell keys apart (`sk-gw-AbCd`). */
export const DISPLAY_PREFIX_LENGTH = 10;

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 248 = 4 * 62: bytes at or above it are rejected so `byte % 62` is exactly uniform (no modulo bias). */
const UNBIASED_BYTE_LIMIT = 256 - (256 % BASE62.length);
const LOCAL_KEY_PATTERN = /^sk-gw-[A-Za-z0-9]{32,}$/;

/** `length` uniformly random base62 characters from the OS CSPRNG. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    // Ask for a little more than needed: about 3% of bytes are rejected.
    const bytes = randomBytes(Math.ceil((length - out.length) * 1.1) + 4);
    for (const byte of bytes) {
      if (byte >= UNBIASED_BYTE_LIMIT) continue;
      out += BASE62[byte % BASE62.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export function generateLocalKey(): string {
  return LOCAL_KEY_PREFIX + randomBase62(LOCAL_KEY_RANDOM_LENGTH);
}

/** Hex SHA-256 of the full secret: what the `keys.hash` column holds and what requests are matched by. */
export function hashLocalKey(secret: string): string {
  // The one-shot form: no Hash object per request (it is on every call's path).
  return hash('sha256', secret, 'hex');
}

export function looksLikeLocalKey(s: string): boolean {
  return LOCAL_KEY_PATTERN.test(s);
}

/** The non-secret beginning of a key, for lists and logs. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}
