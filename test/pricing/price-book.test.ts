import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { costOf } from '../../core/pricing/cost.ts';
import { PriceBook } from '../../core/pricing/price-book.ts';
import type { Usage } from '../../core/usage.ts';

const usage = (u: Partial<Usage>): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  estimated: false,
  ...u,
});

// The rates below are copied from genai-prices 0.1.8's bundled data on purpose: if a data update
// changes them, these tests fail and the change is seen rather than silently billed.
describe('bundled prices', () => {
  const book = new PriceBook();

  it('plain input/output: gpt-4.1 at $2 / $8', () => {
    const p = book.lookup('openai', null, 'gpt-4.1');
    expect(p).toMatchObject({ inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5, cacheWritePerMTok: null, source: 'bundled' });
    // 1000 × 2 + 500 × 8 = 6000 µ$
    expect(costOf(usage({ inputTokens: 1000, outputTokens: 500 }), p!)).toBeCloseTo(0.006, 12);
  });

  it('OpenAI cached tokens: gpt-4o reads at $1.25 instead of $2.50', () => {
    const p = book.lookup('openai', null, 'gpt-4o');
    expect(p).toMatchObject({ inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25, cacheWritePerMTok: null, source: 'bundled' });
    // prompt 10 000 of which 8000 cached: 2000 × 2.5 + 8000 × 1.25 + 200 × 10 = 5000 + 10 000 + 2000 µ$
    const u = usage({ inputTokens: 10_000, cacheReadTokens: 8000, outputTokens: 200 });
    expect(costOf(u, p!)).toBeCloseTo(0.017, 12);
  });

  it('a dated snapshot keeps its own price: gpt-4o-2024-05-13 has no cache discount', () => {
    const p = book.lookup('openai', null, 'gpt-4o-2024-05-13');
    expect(p).toMatchObject({ inputPerMTok: 5, outputPerMTok: 15, cacheReadPerMTok: null });
    // the 8000 cached tokens cost the full input rate: 10 000 × 5 + 200 × 15
    expect(costOf(usage({ inputTokens: 10_000, cacheReadTokens: 8000, outputTokens: 200 }), p!)).toBeCloseTo(0.053, 12);
  });

  it('Anthropic cache write + read: claude-sonnet-4-5 (base tier of its tiered rates)', () => {
    const p = book.lookup('anthropic', null, 'claude-sonnet-4-5-20250929');
    expect(p).toMatchObject({ inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, source: 'bundled' });
    // input 5000 = 1000 uncached + 1000 written + 3000 read; output 400
    // 1000 × 3 + 1000 × 3.75 + 3000 × 0.3 + 400 × 15 = 3000 + 3750 + 900 + 6000 µ$
    const u = usage({ inputTokens: 5000, cacheWriteTokens: 1000, cacheReadTokens: 3000, outputTokens: 400 });
    expect(costOf(u, p!)).toBeCloseTo(0.01365, 12);
    expect(book.lookup('anthropic', null, 'claude-sonnet-4-20250514')).toMatchObject({ cacheWritePerMTok: 3.75, cacheReadPerMTok: 0.3 });
  });

  it('reasoning tokens are billed as output: o4-mini and gemini-2.5-flash', () => {
    const o4 = book.lookup('openai', null, 'o4-mini');
    expect(o4).toMatchObject({ inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275, cacheWritePerMTok: null, source: 'bundled' });
    // 1000 × 1.1 + 3000 × 4.4 (of which 2500 reasoning) = 1100 + 13 200 µ$
    expect(costOf(usage({ inputTokens: 1000, outputTokens: 3000, reasoningTokens: 2500 }), o4!)).toBeCloseTo(0.0143, 12);

    const flash = book.lookup('gemini', null, 'gemini-2.5-flash');
    expect(flash).toMatchObject({ inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.03, cacheWritePerMTok: null, source: 'bundled' });
    // 2000 × 0.3 + 1500 × 2.5 (1200 of them thinking) = 600 + 3750 µ$
    expect(costOf(usage({ inputTokens: 2000, outputTokens: 1500, reasoningTokens: 1200 }), flash!)).toBeCloseTo(0.00435, 12);
  });

  it('agrees with genai-prices’ own arithmetic (below any long-context tier)', () => {
    const cases: [Parameters<PriceBook['lookup']>, string, string, Usage][] = [
      [['openai', null, 'gpt-4o'], 'gpt-4o', 'openai', usage({ inputTokens: 10_000, cacheReadTokens: 8000, outputTokens: 200 })],
      [['anthropic', null, 'claude-sonnet-4-5-20250929'], 'claude-sonnet-4-5-20250929', 'anthropic', usage({ inputTokens: 5000, cacheWriteTokens: 1000, cacheReadTokens: 3000, outputTokens: 400 })],
      [['gemini', null, 'gemini-2.5-pro'], 'gemini-2.5-pro', 'google', usage({ inputTokens: 20_000, cacheReadTokens: 4000, outputTokens: 3000, reasoningTokens: 2000 })],
    ];
    for (const [args, model, providerId, u] of cases) {
      const theirs = calcPrice(
        { input_tokens: u.inputTokens, cache_read_tokens: u.cacheReadTokens, cache_write_tokens: u.cacheWriteTokens, output_tokens: u.outputTokens },
        model,
        { providerId },
      );
      expect(costOf(u, new PriceBook().lookup(...args)!)).toBeCloseTo(theirs!.total_price, 12);
    }
  });
});

describe('provider mapping', () => {
  const book = new PriceBook();

  it('maps native types and presets to genai-prices providers', () => {
    expect(book.lookup('gemini', null, 'gemini-2.5-pro')).toMatchObject({ inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 });
    expect(book.lookup('azure', null, 'gpt-4o')).toMatchObject({ inputPerMTok: 2.5, outputPerMTok: 10 });
    // DeepSeek's current single price (V3.2, since September 2025), not the bundled stale schedule.
    expect(book.lookup('openai-compatible', 'deepseek', 'deepseek-chat', new Date('2026-01-01T12:00:00Z'))).toMatchObject({ inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 });
    expect(book.lookup('openai-compatible', 'xai', 'grok-4')).toMatchObject({ inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.75 });
    expect(book.lookup('openai-compatible', 'mistral', 'mistral-large-latest')).toMatchObject({ inputPerMTok: 2, outputPerMTok: 6 });
    // Groq charges its own rate for gpt-oss, not OpenAI's listed one ($0.039 / $0.18).
    expect(book.lookup('openai-compatible', 'groq', 'openai/gpt-oss-120b')).toMatchObject({ inputPerMTok: 0.15, outputPerMTok: 0.6 });
  });

  it('OpenRouter: its own `vendor/model` entry first, else the vendor’s price for the bare id', () => {
    expect(book.lookup('openai-compatible', 'openrouter', 'anthropic/claude-sonnet-4.5')).toMatchObject({ inputPerMTok: 3, cacheWritePerMTok: 3.75 });
    // OpenRouter's list spells it `claude-sonnet-4.5-20250929`; the Anthropic spelling still prices.
    expect(book.lookup('openai-compatible', 'openrouter', 'anthropic/claude-sonnet-4-5-20250929')).toMatchObject({ inputPerMTok: 3, outputPerMTok: 15 });
  });

  it('unknown hosts infer the vendor from the model name', () => {
    expect(book.lookup('openai-compatible', null, 'gpt-4o')).toMatchObject({ inputPerMTok: 2.5, source: 'bundled' });
    expect(book.lookup('openai-compatible', 'vllm', 'claude-3-5-sonnet-20241022')).toMatchObject({ inputPerMTok: 3, cacheWritePerMTok: 3.75 });
    expect(book.lookup('openai-compatible', null, 'openai/gpt-4o')).toMatchObject({ inputPerMTok: 2.5 });
  });

  it('Gemini ids with the API’s `models/` prefix still price', () => {
    expect(book.lookup('gemini', null, 'models/gemini-2.5-pro')).toMatchObject({ inputPerMTok: 1.25 });
  });

  it('dated rates are picked per call (o3’s 2025 price cut); DeepSeek’s ended night discount is not', () => {
    const peak = book.lookup('openai-compatible', 'deepseek', 'deepseek-chat', new Date('2026-03-01T12:00:00Z'));
    const offPeak = book.lookup('openai-compatible', 'deepseek', 'deepseek-chat', new Date('2026-03-01T20:00:00Z'));
    expect(peak).toMatchObject({ inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 });
    expect(offPeak).toEqual(peak);
    // Any host serving the bundled schedule (time-of-day rules) gets the standard rate at every hour.
    expect(book.lookup('openai-compatible', null, 'deepseek-chat', new Date('2026-03-01T20:00:00Z'))).toMatchObject({ inputPerMTok: 0.27, outputPerMTok: 1.1 });
    expect(book.lookup('openai', null, 'o3', new Date('2025-01-01T00:00:00Z'))).toMatchObject({ inputPerMTok: 10, outputPerMTok: 40 });
    expect(book.lookup('openai', null, 'o3', new Date('2025-07-01T00:00:00Z'))).toMatchObject({ inputPerMTok: 2, outputPerMTok: 8 });
  });
});

describe('unknown, local, demo and user prices', () => {
  it('unknown models are unpriced', () => {
    const book = new PriceBook();
    expect(book.lookup('openai', null, 'no-such-model')).toBeNull();
    expect(book.lookup('anthropic', null, 'gpt-4o')).toBeNull();
    expect(book.lookup('openai-compatible', null, 'meta-llama/Llama-3.1-8B-Instruct')).toBeNull();
    expect(book.lookup('demo', null, 'gpt-4o')).toBeNull();
  });

  it('local servers (ollama, lmstudio) are unpriced even for known names', () => {
    const book = new PriceBook();
    expect(book.lookup('openai-compatible', 'ollama', 'gpt-4o')).toBeNull();
    expect(book.lookup('openai-compatible', 'lmstudio', 'llama3')).toBeNull();
  });

  it('prices the demo models at $1 / $2', () => {
    const book = new PriceBook();
    const demo = { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: null, cacheWritePerMTok: null, source: 'demo' };
    expect(book.lookup('demo', null, 'demo-chat')).toMatchObject(demo);
    expect(book.lookup('demo', null, 'demo-embedding')).toMatchObject(demo);
    // 1000 × 1 + 1000 × 2
    expect(costOf(usage({ inputTokens: 1000, outputTokens: 1000 }), book.lookup('demo', null, 'demo-chat')!)).toBeCloseTo(0.003, 12);
  });

  it('user prices override bundled, demo and local, and replace the cached answer', () => {
    const book = new PriceBook();
    expect(book.lookup('openai', null, 'gpt-4o')?.source).toBe('bundled');
    book.setUserPrices({
      'gpt-4o': { inputPerMTok: 1, outputPerMTok: 4, cacheReadPerMTok: 0.1 },
      llama3: { inputPerMTok: 0.5, outputPerMTok: 0.5 },
      'demo-chat': { inputPerMTok: 0, outputPerMTok: 0 },
    });
    expect(book.lookup('openai', null, 'gpt-4o')).toMatchObject({ inputPerMTok: 1, outputPerMTok: 4, cacheReadPerMTok: 0.1, cacheWritePerMTok: null, source: 'user' });
    expect(book.lookup('openai-compatible', 'ollama', 'llama3')).toMatchObject({ inputPerMTok: 0.5, source: 'user' });
    expect(book.lookup('demo', null, 'demo-chat')).toMatchObject({ inputPerMTok: 0, source: 'user' });
    // 2000 × 1 + 8000 × 0.1 + 100 × 4
    expect(costOf(usage({ inputTokens: 10_000, cacheReadTokens: 8000, outputTokens: 100 }), book.lookup('openai', null, 'gpt-4o')!)).toBeCloseTo(0.0032, 12);

    book.setUserPrices({});
    expect(book.lookup('openai', null, 'gpt-4o')?.source).toBe('bundled');
    expect(book.lookup('openai-compatible', 'ollama', 'llama3')).toBeNull();
  });

  it('rejects nonsense user prices', () => {
    const book = new PriceBook();
    expect(() => book.setUserPrices({ x: { inputPerMTok: -1, outputPerMTok: 1 } })).toThrow(RangeError);
    expect(() => book.setUserPrices({ x: { inputPerMTok: 1, outputPerMTok: Number.NaN } })).toThrow(RangeError);
  });

  it('returned prices are frozen: a caller cannot change what others are billed', () => {
    const p = new PriceBook().lookup('openai', null, 'gpt-4o')!;
    expect(Object.isFrozen(p)).toBe(true);
  });
});

describe('cache and data version', () => {
  it('resolves each (provider, model) once; repeats never reach genai-prices', () => {
    const book = new PriceBook();
    book.lookup('openai', null, 'gpt-4o');
    const afterFirst = book.bundledMatches;
    expect(afterFirst).toBeGreaterThan(0);
    for (let i = 0; i < 100; i++) book.lookup('openai', null, 'gpt-4o');
    // misses are cached too: an unknown model is not re-matched on every call
    book.lookup('openai', null, 'no-such-model');
    const afterMiss = book.bundledMatches;
    for (let i = 0; i < 100; i++) book.lookup('openai', null, 'no-such-model');
    expect(book.bundledMatches).toBe(afterMiss);
    expect(afterMiss).toBeGreaterThan(afterFirst);
  });

  it('a schedule is resolved once too; only the pick among its rules happens per call', () => {
    const book = new PriceBook();
    book.lookup('openai-compatible', 'deepseek', 'deepseek-chat', new Date('2026-03-01T12:00:00Z'));
    const n = book.bundledMatches;
    book.lookup('openai-compatible', 'deepseek', 'deepseek-chat', new Date('2026-03-01T20:00:00Z'));
    expect(book.bundledMatches).toBe(n);
  });

  it('names the price data version', () => {
    expect(new PriceBook().dataVersion()).toBe('genai-prices@0.1.8');
  });
});
