import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrubSecrets } from '../../core/gateway/scrub.ts';

/** What scrubSecrets did before its one-scan probe: each secret, then the key pattern. */
function reference(text: string, secrets: ReadonlyArray<string | null | undefined>): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 8 && out.includes(s)) out = out.replaceAll(s, '[redacted]');
  return out.replace(/sk-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{20,}|gsk_[A-Za-z0-9]{20,}|xai-[A-Za-z0-9]{20,}/g, '[redacted]');
}

describe('scrubSecrets', () => {
  it('removes secrets (whatever characters they hold) and key-shaped strings, and leaves other text alone', () => {
    const secret = 'my.secret+(key)[1]|^$\\/-?*';
    expect(scrubSecrets(`a ${secret} b`, [secret])).toBe('a [redacted] b');
    expect(scrubSecrets('key sk-abcdefghijklmnop1234 here', [])).toBe('key [redacted] here');
    expect(scrubSecrets('AIzaSyA-0123456789abcdefghij and xai-ABCDEFGHIJKLMNOPQRST0', ['unused-secret'])).toBe('[redacted] and [redacted]');
    const plain = '{"model":"m","messages":[{"role":"user","content":"hello sk- and AIza"}]}';
    expect(scrubSecrets(plain, ['sk-provider-0123456789abcdef', null, 'short'])).toBe(plain);
    // A secret next to a key of another shape is still removed whole (the pattern alone would stop inside it).
    const s = 'sk-tail-secret-value';
    expect(scrubSecrets(`xai-${'A'.repeat(20)}${s}`, [s])).not.toContain('secret-value');
  });

  it('gives what the two-pass scrub gave, for any text and secrets', () => {
    const piece = fc.constantFrom('sk-', 'AIza', 'gsk_', 'xai-', 'secret-', '.', '*', '(', '\u0000', 'A', '0', '-', '_', ' ', 'é', '"');
    const text = fc.array(piece, { maxLength: 60 }).map((p) => p.join(''));
    const secret = fc.oneof(fc.constant(null), fc.array(piece, { minLength: 1, maxLength: 12 }).map((p) => p.join('')));
    fc.assert(
      fc.property(text, fc.array(secret, { maxLength: 3 }), fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 3 }), (t, secrets, at) => {
        // Plant some of the secrets in the text.
        let planted = t;
        for (const i of at) if (secrets[i]) planted = `${planted}${secrets[i]}${planted}`;
        expect(scrubSecrets(planted, secrets)).toBe(reference(planted, secrets));
      }),
      { numRuns: 3000 },
    );
  });
});
