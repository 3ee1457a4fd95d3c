import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { displayPrefix, generateLocalKey, hashLocalKey, looksLikeLocalKey, randomBase62 } from '../../core/keys/local-key.ts';

describe('local keys', () => {
  it('generates sk-gw- plus 40 base62 characters, all different', () => {
    const keys = new Set(Array.from({ length: 200 }, generateLocalKey));
    expect(keys.size).toBe(200);
    for (const key of keys) {
      expect(key).toMatch(/^sk-gw-[A-Za-z0-9]{32,}$/);
      expect(key).toHaveLength(46);
      expect(looksLikeLocalKey(key)).toBe(true);
    }
  });

  it('draws every base62 character about equally often (no modulo bias towards the first 8)', () => {
    const counts = new Map<string, number>();
    const sample = randomBase62(62 * 2000);
    for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Expected 2000 each; a 256 % 62 bias would put the first 8 characters near 2400.
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(1700);
      expect(n).toBeLessThan(2300);
    }
  });

  it('hashes with hex SHA-256 of the full secret', () => {
    const key = generateLocalKey();
    expect(hashLocalKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashLocalKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('recognises only well-formed keys', () => {
    expect(looksLikeLocalKey('sk-gw-' + 'a'.repeat(31))).toBe(false);
    expect(looksLikeLocalKey('sk-gw-' + 'a'.repeat(32))).toBe(true);
    expect(looksLikeLocalKey('sk-' + 'a'.repeat(40))).toBe(false);
    expect(looksLikeLocalKey('sk-gw-' + 'a'.repeat(39) + '!')).toBe(false);
    expect(looksLikeLocalKey(' sk-gw-' + 'a'.repeat(40))).toBe(false);
  });

  it('shows only the first 10 characters', () => {
    expect(displayPrefix('sk-gw-AbCdEfGh')).toBe('sk-gw-AbCd');
  });
});
