/** The pure pieces of the money path: audio durations, TPM reservations, clamping, clean numbers. */
import { describe, expect, it } from 'vitest';
import { callToJson } from '../../core/call-json.ts';
import { audioDuration, reserveSeconds } from '../../core/gateway/audio-duration.ts';
import { costOf, roundUsd, stringifyMoney, stringifyWithCost } from '../../core/pricing/cost.ts';
import { worstCaseUsd } from '../../core/pricing/worst-case.ts';
import { RateLimiter } from '../../core/routing/rate-limiter.ts';
import { fromOpenAIUsage, sanitizeUsage } from '../../core/usage.ts';
import type { Usage } from '../../core/usage.ts';
import { ManualClock } from '../routing/manual-clock.ts';

const usage = (u: Partial<Usage>): Usage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: false, ...u });

describe('audio duration from the file', () => {
  it('WAV: data size over byte rate', () => {
    const h = Buffer.alloc(44);
    h.write('RIFF', 0, 'latin1');
    h.write('WAVEfmt ', 8, 'latin1');
    h.writeUInt32LE(16, 16);
    h.writeUInt32LE(32_000, 28);
    h.write('data', 36, 'latin1');
    h.writeUInt32LE(96_000, 40);
    const d = audioDuration(Buffer.concat([h, Buffer.alloc(96_000)]));
    expect(d).toEqual({ seconds: 3, measured: true });
  });

  it('MP3 (constant bitrate, after an ID3 tag): bytes over the frame bitrate', () => {
    const id3 = Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 10, ...Buffer.alloc(10)]);
    const frames = Buffer.alloc(160_000);
    frames.set([0xff, 0xfb, 0x90, 0x00]); // MPEG-1 layer III, 128 kbit/s, 44.1 kHz
    const d = audioDuration(Buffer.concat([id3, frames]));
    expect(d.measured).toBe(true);
    expect(d.seconds).toBeCloseTo(10, 6);
  });

  it('FLAC: total samples over sample rate', () => {
    const b = Buffer.alloc(42);
    b.write('fLaC', 0, 'latin1');
    const s = 18;
    const rate = 44_100;
    b[s] = rate >> 12;
    b[s + 1] = (rate >> 4) & 0xff;
    b[s + 2] = ((rate & 0xf) << 4) | (1 << 1);
    b[s + 3] = 15 << 4;
    b.writeUInt32BE(441_000 * 2, s + 4);
    expect(audioDuration(b)).toEqual({ seconds: 20, measured: true });
  });

  it('unreadable formats fall back to their size: 32 kbit/s to settle, 16 kbit/s to reserve', () => {
    const blob = Buffer.alloc(40_000, 7);
    const d = audioDuration(blob);
    expect(d).toEqual({ seconds: 10, measured: false });
    expect(reserveSeconds(blob, d)).toBe(20);
  });
});

describe('TPM reservations', () => {
  it('holds the reservation until release, then counts only what was used', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ clock });
    const a = limiter.check('k', { tpm: 1000 }, 600);
    expect(a.allowed).toBe(true);
    // 600 held: a second call of 600 does not fit, one of 400 does.
    expect(limiter.check('k', { tpm: 1000 }, 600).allowed).toBe(false);
    const b = limiter.check('k', { tpm: 1000 }, 400);
    expect(b.allowed).toBe(true);
    limiter.release(a.reservation);
    limiter.recordTokens('k', 100);
    limiter.release(a.reservation); // idempotent
    const c = limiter.check('k', { tpm: 1000 }, 500);
    expect(c.allowed).toBe(true);
    expect(c.headers['x-ratelimit-remaining-tokens']).toBe('0');
  });

  it('a reservation released after its window was reset, or after it left the window, takes nothing off the next window', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ clock });
    const old = limiter.check('k', { tpm: 1000 }, 600);
    limiter.reset('k');
    const held = limiter.check('k', { tpm: 1000 }, 700);
    expect(held.allowed).toBe(true);
    limiter.release(old.reservation);
    // 700 still held in the new window: 301 does not fit, 300 does.
    expect(limiter.check('k', { tpm: 1000 }, 301).allowed).toBe(false);
    clock.advance(61_000);
    const fresh = limiter.check('k', { tpm: 1000 }, 900);
    expect(fresh.allowed).toBe(true);
    limiter.release(held.reservation);
    expect(limiter.check('k', { tpm: 1000 }, 101).allowed).toBe(false);
    expect(limiter.check('k', { tpm: 1000 }, 100).allowed).toBe(true);
  });

  it('a reservation above the whole limit is cut to it: the call runs alone in an empty window', () => {
    const limiter = new RateLimiter({ clock: new ManualClock() });
    const big = limiter.check('k', { tpm: 1000 }, 50_000);
    expect(big.allowed).toBe(true);
    const next = limiter.check('k', { tpm: 1000 }, 1);
    expect(next.allowed).toBe(false);
    expect(next.retryAfterMs).toBeGreaterThan(0);
  });
});

describe('usage that cannot be true', () => {
  it('is clamped to 0..1e9 and flagged; sane usage is returned as is', () => {
    const sane = usage({ inputTokens: 10, outputTokens: 5 });
    expect(sanitizeUsage(sane)).toBe(sane);
    const bad = sanitizeUsage(usage({ inputTokens: 1e308, outputTokens: -4, cacheReadTokens: Number.NaN, upstreamCostUsd: Number.POSITIVE_INFINITY }));
    expect(bad).toMatchObject({ inputTokens: 1e9, outputTokens: 0, cacheReadTokens: 0, clamped: true });
    expect(bad.upstreamCostUsd).toBeUndefined();
  });

  it('DeepSeek cache fields without prompt_tokens_details; transcription input_token_details', () => {
    expect(fromOpenAIUsage({ prompt_tokens: 1000, completion_tokens: 1, prompt_cache_hit_tokens: 600, prompt_cache_miss_tokens: 400 })).toMatchObject({ inputTokens: 1000, cacheReadTokens: 600 });
    expect(fromOpenAIUsage({ type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 0, audio_tokens: 14 }, output_tokens: 7 })).toMatchObject({ inputTokens: 14, audioInputTokens: 14, outputTokens: 7 });
  });
});

describe('clean numbers', () => {
  it('the body carries the plain decimal, whatever JSON.stringify would print', () => {
    const body = { usage: { prompt_tokens: 1 } as Record<string, unknown> };
    expect(stringifyWithCost(body, body.usage, 2e-8)).toBe('{"usage":{"prompt_tokens":1,"cost":0.00000002}}');
    expect(body.usage.cost).toBe(2e-8);
    // Text that looks like the marker inside content is escaped, so it is never replaced.
    const tricky = { text: '"__gateway_cost_usd__"', usage: {} as Record<string, unknown> };
    expect(JSON.parse(stringifyWithCost(tricky, tricky.usage, 0.5))).toEqual({ text: '"__gateway_cost_usd__"', usage: { cost: 0.5 } });
    expect(stringifyMoney({ used: 1e-7, remain: 4.9999999 })).toBe('{"used":0.0000001,"remain":4.9999999}');
  });

  it('one rounding rule: 1e-10 USD, so 6150 µ$ is 0.00615 and not 0.0000061499999999999996', () => {
    expect(roundUsd(0.0000061499999999999996)).toBe(0.00000615);
    expect(costOf(usage({ inputTokens: 1000, audioInputTokens: 900, outputTokens: 50 }), { inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: null, cacheWritePerMTok: null, audioInputPerMTok: 6, source: 'bundled' })).toBe(0.00615);
  });

  it('the worst case counts n and the priority multiplier', () => {
    const price = { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: null, cacheWritePerMTok: null, serviceTierMultipliers: { priority: 2 }, source: 'bundled' as const };
    const one = worstCaseUsd(price, 100, 1000, 1);
    expect(worstCaseUsd(price, 100, 1000, 3)).toBeCloseTo(one + 2 * 0.002, 12);
    expect(worstCaseUsd(price, 100, 1000, 1, 'priority')).toBeCloseTo(one * 2, 12);
  });
});

describe('audio chat models', () => {
  it('gpt-4o-audio-preview audio tokens cost $40 in / $80 out per million, text tokens $2.50 / $10', async () => {
    const { PriceBook } = await import('../../core/pricing/price-book.ts');
    const price = new PriceBook().lookup('openai', null, 'gpt-4o-audio-preview')!;
    const u = fromOpenAIUsage({ prompt_tokens: 1100, completion_tokens: 600, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 1000 }, completion_tokens_details: { audio_tokens: 500 } })!;
    // 100×2.5 + 1000×40 + 100×10 + 500×80
    expect(costOf(u, price)).toBe(0.08125);
  });
});

describe('books that agree', () => {
  it('a call that never reached a provider has pricing null in logs --json', () => {
    const base = { id: 'r', time: 0, keyId: 'k', keyName: 'k', endpoint: '/v1/chat/completions', modelRequested: 'm', model: null, provider: null, status: 402, errorType: 'insufficient_quota', errorMessage: 'x', stream: false, inputTokens: 0, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: null, pricing: 'unpriced' as const, priceVersion: null, latencyMs: 1, ttftMs: null, attempts: 0, attemptsJson: '[]' };
    expect(callToJson(base).pricing).toBeNull();
    expect(callToJson({ ...base, status: 200, provider: 'p', priceVersion: 'genai-prices@0.1.8' }).pricing).toBe('unpriced');
  });
});
