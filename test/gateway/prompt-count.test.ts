/**
 * The prompt counter admission and estimated usage share: counted on first ask, the text built only when a
 * count is asked, and an object (not a function carrying `exact`, which kept every call's request alive
 * until the next young collection).
 */
import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { promptTokenCounter, warmTokenizer } from '../../core/gateway/estimate.ts';
import type { PromptCount } from '../../core/gateway/estimate.ts';

const TEXT = 'Review this change and say what could break when the pool is full.';

describe('promptTokenCounter', () => {
  it('counts a prompt now and exactly, the same number once the tokenizer is loaded', async () => {
    await warmTokenizer();
    const count = promptTokenCounter([TEXT, TEXT], true) as PromptCount;
    expect(typeof count).toBe('object');
    expect(count.now()).toBe(2 * encode(TEXT).length);
    expect(await count.exact()).toBe(2 * encode(TEXT).length);
  });

  it('builds the text only when a count is asked, and once for `now`', async () => {
    await warmTokenizer();
    let built = 0;
    const count = promptTokenCounter(() => {
      built++;
      return TEXT;
    }, false) as PromptCount;
    expect(built).toBe(0);
    expect(count.now()).toBe(encode(TEXT).length);
    expect(count.now()).toBe(encode(TEXT).length);
    expect(built).toBe(1);
    expect(await count.exact()).toBe(encode(TEXT).length);
  });

  it('builds the text at once when admission needs the count', () => {
    let built = 0;
    promptTokenCounter(() => {
      built++;
      return TEXT;
    }, true);
    expect(built).toBe(1);
  });
});
