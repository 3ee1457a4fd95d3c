import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { scrubSecrets } from '../../core/gateway/scrub.ts';
import { MAX_BODY_BYTES, truncateBody } from '../../core/storage/audit-writer.ts';
import { storedBody } from '../../core/storage/stored-body.ts';

// Key-shaped, plainly fake and built here, so no scanner mistakes the file for a leaked key.
const SECRET = `sk-proj-${'FAKE0'.repeat(8)}`;
const KEY_SHAPED = { google: `AIza${'FAKE'.repeat(6)}`, anthropic: `sk-ant-${'fake'.repeat(6)}` };
const utf8 = (v: string | Buffer | null): string | null => (v === null ? null : Buffer.isBuffer(v) ? v.toString('utf8') : v);
/** What the writer stored before bodies went in as bytes: cut as a string, then scrubbed, then capped. */
const asString = (body: string | null, secrets: string[] | undefined): string | null =>
  truncateBody(body === null || secrets === undefined ? body : scrubSecrets(body.length > MAX_BODY_BYTES ? (truncateBody(body) ?? '') : body, secrets), MAX_BODY_BYTES);

const bodies: Record<string, string> = {
  'small ASCII': '{"model":"gpt-4o","messages":[]}',
  'ASCII over the cap': 'a'.repeat(100 * 1024),
  'exactly the cap': 'b'.repeat(MAX_BODY_BYTES),
  'one byte over the cap': 'c'.repeat(MAX_BODY_BYTES + 1),
  'latin1 text (é)': `${'caf\u00e9 '.repeat(30_000)}`,
  'three-byte characters (€)': '€'.repeat(40_000),
  'surrogate pairs (😀)': '😀'.repeat(20_000),
  'NUL characters': `a\u0000b${'\u0000x'.repeat(40_000)}`,
  'secrets near the start and past the cut': `${SECRET} ${'d'.repeat(70_000)} ${SECRET}`,
  'a key-shaped token in a big body': `${'e'.repeat(1000)} ${KEY_SHAPED.google} ${'f'.repeat(80_000)}`,
  'a secret in a small body': `{"key":"${SECRET}","other":"${KEY_SHAPED.anthropic}"}`,
  'a secret in a mid-size body that fits': `${'g'.repeat(30_000)}${SECRET}${'é'.repeat(10_000)}`,
};

describe('storedBody: a body as the audit row stores it', () => {
  for (const [name, body] of Object.entries(bodies)) {
    for (const secrets of [undefined, [SECRET]]) {
      it(`${name}, ${secrets ? 'with' : 'without'} secrets to scrub: the same text as before, never over the cap`, () => {
        const stored = storedBody(body, secrets, MAX_BODY_BYTES);
        expect(utf8(stored)).toBe(asString(body, secrets));
        expect(Buffer.byteLength(utf8(stored) ?? '')).toBeLessThanOrEqual(MAX_BODY_BYTES);
        if (secrets) expect(utf8(stored)).not.toContain(SECRET);
        expect(utf8(stored)).not.toContain('\uFFFD');
        // The client's bytes (a large request body comes so, in a view of its own or of a larger buffer).
        const bytes = Buffer.from(body, 'utf8');
        const larger = new Uint8Array(bytes.length + 4);
        larger.set(bytes, 2);
        const inLarger = new Uint8Array(larger.buffer, 2, bytes.length);
        expect(utf8(storedBody(new Uint8Array(bytes), secrets, MAX_BODY_BYTES))).toBe(asString(body, secrets));
        expect(utf8(storedBody(inLarger, secrets, MAX_BODY_BYTES))).toBe(asString(body, secrets));
      });
    }
  }

  it('null stays null; a short body stays the string it is (no copy)', () => {
    expect(storedBody(null, [SECRET], MAX_BODY_BYTES)).toBeNull();
    const body = '{"a":1}';
    expect(storedBody(body, undefined, MAX_BODY_BYTES)).toBe(body);
  });

  it('a smaller cap counts the cut from the whole body', () => {
    const body = 'h'.repeat(10_000);
    const stored = utf8(storedBody(body, undefined, 1000)) ?? '';
    const m = /…\[truncated (\d+) bytes\]$/.exec(stored);
    expect(m).not.toBeNull();
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(1000);
    expect(stored.slice(0, m?.index).length + Number(m?.[1])).toBe(10_000);
  });

  it('a scrub that makes a body longer still keeps it under the cap', () => {
    const short = 'k1234567'; // 8 characters, replaced by the 10 of [redacted]
    const body = `${short} `.repeat(7000); // 63,000 bytes before, 77,000 after
    const stored = utf8(storedBody(body, [short], MAX_BODY_BYTES)) ?? '';
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(stored).not.toContain(short);
    expect(stored).toMatch(/…\[truncated \d+ bytes\]$/);
  });

  it('SQLite stores the bytes as TEXT, read back as the same string', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (b TEXT)');
    const insert = db.prepare('INSERT INTO t (b) VALUES (CAST(? AS TEXT))');
    for (const body of Object.values(bodies)) insert.run(storedBody(body, [SECRET], MAX_BODY_BYTES));
    insert.run(null);
    const rows = db.prepare('SELECT typeof(b) AS type, b FROM t ORDER BY rowid').all() as { type: string; b: string | null }[];
    expect(rows.map((r) => r.b)).toEqual([...Object.values(bodies).map((b) => asString(b, [SECRET])), null]);
    expect(new Set(rows.slice(0, -1).map((r) => r.type))).toEqual(new Set(['text']));
    db.close();
  });
});
