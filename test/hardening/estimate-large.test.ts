/**
 * A huge prompt is estimated by its length, never tokenised on the event loop (45 MB took 1.2 s there),
 * even once the tokenizer is loaded; short texts are still tokenised exactly.
 */
import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countTokens, MAX_TOKENIZED_CHARS, warmTokenizer } from '../../core/gateway/estimate.ts';

describe('token estimates for large prompts', () => {
  it('tokenises short texts and estimates long ones at 4 characters a token', async () => {
    await warmTokenizer();
    const short = 'The quick brown fox jumps over the lazy dog. '.repeat(10);
    expect(countTokens(short)).toBe(encode(short).length);
    const huge = 'word '.repeat(9 * 1024 * 1024); // 45 MiB
    expect(huge.length).toBeGreaterThan(MAX_TOKENIZED_CHARS);
    expect(countTokens(huge)).toBe(Math.ceil(huge.length / 4));
  });
});
