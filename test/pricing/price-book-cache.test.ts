// Proves the cache from the outside: genai-prices' calcPrice is wrapped in a spy and handed to every book,
// so a hit that still reached the library would show up regardless of the PriceBook's own counter.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as genai from '@pydantic/genai-prices';
import { PriceBook as RealPriceBook } from '../../core/pricing/price-book.ts';

const calcPrice = vi.fn(genai.calcPrice);
class PriceBook extends RealPriceBook {
  constructor() {
    super(calcPrice);
  }
}

describe('PriceBook cache (spy on genai-prices)', () => {
  // A block body on purpose: mockClear returns the mock, and a function returned from beforeEach is
  // run by vitest as the test's teardown.
  beforeEach(() => {
    calcPrice.mockClear();
  });

  it('constructing a book touches no price data', () => {
    new PriceBook();
    expect(calcPrice).not.toHaveBeenCalled();
  });

  it('the second lookup of a model does not call calcPrice', () => {
    const book = new PriceBook();
    expect(book.lookup('anthropic', null, 'claude-sonnet-4-5-20250929')).not.toBeNull();
    const first = calcPrice.mock.calls.length;
    expect(first).toBeGreaterThan(0);
    expect(book.lookup('anthropic', null, 'claude-sonnet-4-5-20250929')).not.toBeNull();
    expect(calcPrice).toHaveBeenCalledTimes(first);
  });

  it('user prices never call calcPrice; setting them invalidates cached bundled answers', () => {
    const book = new PriceBook();
    book.lookup('openai', null, 'gpt-4o');
    book.setUserPrices({ 'my-model': { inputPerMTok: 1, outputPerMTok: 1 } });
    calcPrice.mockClear();
    expect(book.lookup('openai', null, 'my-model')?.source).toBe('user');
    expect(calcPrice).not.toHaveBeenCalled();
    book.lookup('openai', null, 'gpt-4o');
    expect(calcPrice).toHaveBeenCalledTimes(1);
  });

  it('books do not share a cache (user prices are per book)', () => {
    const a = new PriceBook();
    a.lookup('openai', null, 'gpt-4o');
    calcPrice.mockClear();
    new PriceBook().lookup('openai', null, 'gpt-4o');
    expect(calcPrice).toHaveBeenCalledTimes(1);
  });
});
