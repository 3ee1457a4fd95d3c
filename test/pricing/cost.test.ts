import { describe, expect, it } from 'vitest';
import { costOf, formatUsd } from '../../core/pricing/cost.ts';
import type { ModelPrice } from '../../core/pricing/price.ts';
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

const price = (p: Partial<ModelPrice>): ModelPrice => ({
  inputPerMTok: 0,
  outputPerMTok: 0,
  cacheReadPerMTok: null,
  cacheWritePerMTok: null,
  source: 'user',
  ...p,
});

describe('costOf', () => {
  it('charges plain input and output per million tokens', () => {
    // 1000 × $2/M + 500 × $8/M = 0.002 + 0.004
    expect(costOf(usage({ inputTokens: 1000, outputTokens: 500 }), price({ inputPerMTok: 2, outputPerMTok: 8 }))).toBeCloseTo(0.006, 12);
  });

  it('takes cache reads and writes out of inputTokens and charges their own rates', () => {
    const p = price({ inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 });
    // uncached 1000 × 3 + write 1000 × 3.75 + read 3000 × 0.3 + out 400 × 15 = 3000 + 3750 + 900 + 6000
    const u = usage({ inputTokens: 5000, cacheWriteTokens: 1000, cacheReadTokens: 3000, outputTokens: 400 });
    expect(costOf(u, p)).toBeCloseTo(0.01365, 12);
  });

  it('charges cache tokens at the input rate when the price has no cache rates', () => {
    const p = price({ inputPerMTok: 5, outputPerMTok: 15 });
    // (2000 uncached + 8000 read) × 5 — the same as no caching at all
    expect(costOf(usage({ inputTokens: 10_000, cacheReadTokens: 8000 }), p)).toBeCloseTo(0.05, 12);
  });

  it('bills reasoning as output, once (it is already inside outputTokens)', () => {
    const p = price({ inputPerMTok: 1.1, outputPerMTok: 4.4 });
    // 1000 × 1.1 + 3000 × 4.4; adding the 2500 reasoning tokens again would give 0.0253
    expect(costOf(usage({ inputTokens: 1000, outputTokens: 3000, reasoningTokens: 2500 }), p)).toBeCloseTo(0.0143, 12);
  });

  it('never lets uncached input go negative or count garbage', () => {
    const p = price({ inputPerMTok: 1, outputPerMTok: 1, cacheReadPerMTok: 0.5 });
    // cache tokens larger than the total: uncached clamps to 0, the reads are still billed
    expect(costOf(usage({ inputTokens: 100, cacheReadTokens: 300 }), p)).toBeCloseTo(0.00015, 12);
    expect(costOf(usage({ inputTokens: -5, outputTokens: Number.NaN }), p)).toBe(0);
  });
});

describe('formatUsd', () => {
  it.each([
    [0, '0'],
    [0.000015, '0.000015'],
    [1e-10, '0.0000000001'],
    [1.5e-7, '0.00000015'],
    [4e-11, '0'],
    [6e-11, '0.0000000001'],
    [0.017, '0.017'],
    [12.5, '12.5'],
    [3, '3'],
    [0.1 + 0.2, '0.3'],
    [-0.25, '-0.25'],
    [-1e-12, '0'],
    [1e21, '1000000000000000000000'],
  ])('%s → %s', (n, s) => {
    expect(formatUsd(n)).toBe(s);
  });

  it('never uses exponent notation', () => {
    for (const n of [1e-7, 2.5e-9, 123456789.123, 1e20]) expect(formatUsd(n)).not.toMatch(/e/i);
  });

  it('refuses non-finite amounts', () => {
    expect(() => formatUsd(Number.NaN)).toThrow(RangeError);
    expect(() => formatUsd(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
