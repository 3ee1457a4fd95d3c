/** The most a token-priced call can cost, for reservations made before it is forwarded. */
import { costOf, perImagePrice } from './cost.ts';
import type { ModelPrice } from './price.ts';

/**
 * Prompt estimate plus `outputTokens` per choice, at the tier the prompt falls in, times the
 * multiplier of the service tier the request asks for (`priority` costs more).
 * The prompt estimate gets a 10 % margin: ours is a tokenizer count, the provider's may differ.
 */
export function worstCaseUsd(price: ModelPrice, promptTokens: number, outputTokens: number, n: number, serviceTier?: string): number {
  const prompt = Math.ceil(promptTokens * 1.1) + 8;
  const usd = costOf(
    { inputTokens: prompt, outputTokens: outputTokens * n, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: true },
    // Audio/image output would be priced above text only if asked for; text rates are the base case.
    price,
  );
  const m = serviceTier === undefined ? undefined : price.serviceTierMultipliers?.[serviceTier];
  return m !== undefined && m > 1 ? usd * m : usd;
}

/** n images of `kind` (`size|quality`): the per-image price, else the token-priced model's published worst case. */
export function imageWorstCaseUsd(price: ModelPrice, kind: string, n: number, fallbackPerImage: number | null): number | null {
  const each = perImagePrice(price, kind) ?? fallbackPerImage;
  return each === null ? null : each * n;
}
