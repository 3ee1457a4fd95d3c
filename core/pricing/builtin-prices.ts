/**
 * Prices the bundled genai-prices data lacks or has wrong, from the providers' own price pages
 * (checked 2026-11). Looked up before the bundled data for the hosts named; `gateway prices set`
 * still wins over both.
 */
import type { ModelPrice } from './price.ts';

const base = { cacheReadPerMTok: null, cacheWritePerMTok: null, source: 'builtin' as const };

/**
 * DeepSeek: the bundled record still carries the night discount (00:30-16:30 UTC standard, otherwise
 * half price) that DeepSeek ended in September 2025 with V3.2's single price: $0.28 input (cache
 * miss), $0.028 cache hit, $0.42 output, for both chat and reasoner.
 */
const DEEPSEEK: ModelPrice = Object.freeze({ ...base, inputPerMTok: 0.28, cacheReadPerMTok: 0.028, outputPerMTok: 0.42, maxOutputTokens: 65_536, contextWindow: 131_072 });

/** OpenAI's per-image prices (the token-priced GPT image models also get these as their worst case). */
const DALL_E_3: ModelPrice = Object.freeze({
  ...base, inputPerMTok: 0, outputPerMTok: 0,
  perImageUsd: Object.freeze({ '1024x1024|standard': 0.04, '1024x1792|standard': 0.08, '1792x1024|standard': 0.08, '1024x1024|hd': 0.08, '1024x1792|hd': 0.12, '1792x1024|hd': 0.12, '*|standard': 0.08, '*|hd': 0.12, '*': 0.04 }),
});
const DALL_E_2: ModelPrice = Object.freeze({
  ...base, inputPerMTok: 0, outputPerMTok: 0,
  perImageUsd: Object.freeze({ '256x256|*': 0.016, '512x512|*': 0.018, '1024x1024|*': 0.02, '*': 0.02 }),
});

/**
 * The audio chat models: the bundled record has only their text rates, while audio tokens cost far
 * more ($40 in / $80 out per million for gpt-4o-audio-preview, $10 / $20 for the mini one).
 */
const GPT_4O_AUDIO: ModelPrice = Object.freeze({ ...base, inputPerMTok: 2.5, outputPerMTok: 10, audioInputPerMTok: 40, audioOutputPerMTok: 80, maxOutputTokens: 16_384 });
const GPT_4O_MINI_AUDIO: ModelPrice = Object.freeze({ ...base, inputPerMTok: 0.15, outputPerMTok: 0.6, audioInputPerMTok: 10, audioOutputPerMTok: 20, maxOutputTokens: 16_384 });

export const BUILTIN_PRICES: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = {
  deepseek: { 'deepseek-chat': DEEPSEEK, 'deepseek-reasoner': DEEPSEEK },
  openai: { 'dall-e-3': DALL_E_3, 'dall-e-2': DALL_E_2, 'gpt-4o-audio-preview': GPT_4O_AUDIO, 'gpt-4o-mini-audio-preview': GPT_4O_MINI_AUDIO },
  azure: { 'dall-e-3': DALL_E_3, 'dall-e-2': DALL_E_2, 'gpt-4o-audio-preview': GPT_4O_AUDIO, 'gpt-4o-mini-audio-preview': GPT_4O_MINI_AUDIO },
};

/**
 * Per-image worst cases of the token-priced image models (OpenAI's published per-image estimates,
 * high quality, largest size), used to reserve before the call; the call then pays its tokens.
 */
export const IMAGE_WORST_CASE_USD: Readonly<Record<string, number>> = {
  'gpt-image-1': 0.25,
  'gpt-image-1-mini': 0.052,
  'gpt-image-1.5': 0.25,
};

/**
 * `service_tier` multipliers when the price data has no separate rates: OpenAI's priority processing
 * lists about 2x the standard rates (1.7x to 2x by model; 2x is the safe side) and flex half of them.
 */
export const DEFAULT_SERVICE_TIERS: Readonly<Record<string, number>> = Object.freeze({ priority: 2, flex: 0.5 });
