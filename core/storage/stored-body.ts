/**
 * A body as the SQLite audit row stores it: at most `maxBytes` of UTF-8, marker included, secrets scrubbed
 * (`CallRow.bodySecrets`). A body that may need cutting is made into UTF-8 bytes once and handed to SQLite as
 * such (the insert casts it to TEXT): cutting it as a string and binding that string cost twice as much at
 * 100 KB, mostly because the marker's `…` turned the kept 64 KiB into a two-byte string that was then measured
 * and encoded character by character, twice.
 */
import { scrubSecrets } from '../gateway/scrub.ts';

/** Room kept under the cap for the truncation marker, so a stored body never exceeds the cap. */
export const MARKER_RESERVE_BYTES = 64;

/** `bytesTotal`: the body's whole length in bytes, when `body` (bytes) holds only its start. */
export function storedBody(body: string | Uint8Array | null, secrets: readonly string[] | undefined, maxBytes: number, bytesTotal?: number): string | Buffer | null {
  if (body === null) return null;
  if (typeof body !== 'string') return fromBytes(Buffer.from(body.buffer, body.byteOffset, body.byteLength), bytesTotal ?? body.byteLength, secrets, maxBytes);
  // A UTF-16 unit is at most 3 UTF-8 bytes: a short body needs no byte count and is bound as the string it is.
  if (body.length * 3 <= maxBytes) {
    const text = secrets ? scrubSecrets(body, secrets) : body;
    return text.length * 3 <= maxBytes ? text : fit(Buffer.from(text, 'utf8'), maxBytes);
  }
  const total = Buffer.byteLength(body, 'utf8');
  // Every UTF-16 unit is at least one byte, so the first `budget` units hold at least the `budget` bytes kept.
  return fromBytes(Buffer.from(total <= maxBytes ? body : body.slice(0, maxBytes - MARKER_RESERVE_BYTES), 'utf8'), total, secrets, maxBytes);
}

/** `bytes`, a body of `total` bytes or its start, cut to the cap (cut first, then scrubbed: the scrub reads 64 KiB at most). */
function fromBytes(bytes: Buffer, total: number, secrets: readonly string[] | undefined, maxBytes: number): Buffer {
  if (total <= maxBytes) return secrets ? fit(scrubBytes(bytes, secrets), maxBytes) : bytes;
  const budget = maxBytes - MARKER_RESERVE_BYTES;
  const cut = charBoundary(bytes, budget);
  const kept = secrets ? scrubBytes(bytes.subarray(0, cut), secrets) : bytes.subarray(0, cut);
  return withMarker(kept.subarray(0, charBoundary(kept, budget)), total - cut);
}

/** `bytes` when they fit; otherwise cut, with the marker saying how much. */
function fit(bytes: Buffer, maxBytes: number): Buffer {
  if (bytes.length <= maxBytes) return bytes;
  const cut = charBoundary(bytes, maxBytes - MARKER_RESERVE_BYTES);
  return withMarker(bytes.subarray(0, cut), bytes.length - cut);
}

/** What ends a cut body: how many of its bytes were cut. */
export const truncationMarker = (cutBytes: number): string => `…[truncated ${cutBytes} bytes]`;

const withMarker = (kept: Buffer, cutBytes: number): Buffer => Buffer.concat([kept, Buffer.from(truncationMarker(cutBytes), 'utf8')]);

/** The largest length up to `limit` that does not split a UTF-8 character (steps back off 10xxxxxx bytes). */
export function charBoundary(bytes: Buffer, limit: number): number {
  let cut = Math.min(limit, bytes.length);
  while (cut > 0 && cut < bytes.length && (bytes[cut] & 0xc0) === 0x80) cut--;
  return cut;
}

/**
 * Secrets scrubbed from UTF-8 bytes through their latin1 view (one character per byte): the key patterns are
 * ASCII and a secret is searched as its own UTF-8 bytes, so every match is whole characters and what is left
 * stays valid UTF-8. The view is a one-byte string, which the regular expression scans fastest.
 */
function scrubBytes(bytes: Buffer, secrets: readonly string[]): Buffer {
  const view = bytes.toString('latin1');
  const scrubbed = scrubSecrets(
    view,
    secrets.map((s) => Buffer.from(s, 'utf8').toString('latin1')),
  );
  return scrubbed === view ? bytes : Buffer.from(scrubbed, 'latin1');
}
