/**
 * Turns normalised usage into dollars, and dollars into the plain decimal the API shows
 * (`usage.cost`, `x-gateway-cost-usd`). Pure arithmetic: the hot path calls it on every response.
 */
import type { Usage } from '../usage.ts';
import type { ModelPrice } from './price.ts';

/** Token counts come from upstream JSON; a negative or non-finite count must not turn into a refund or NaN. */
const tokens = (n: number): number => (Number.isFinite(n) && n > 0 ? n : 0);

/**
 * Cost in USD. `inputTokens` includes cache reads and writes (OpenAI semantics), so only the rest is
 * charged at the plain input rate. Reasoning is already part of `outputTokens` (adapters normalise
 * Gemini's separate `thoughtsTokenCount` into it) and is billed at the output rate, so
 * `reasoningTokens` is informational here: adding it would bill thinking twice.
 */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cacheRead = tokens(usage.cacheReadTokens);
  const cacheWrite = tokens(usage.cacheWriteTokens);
  const uncached = Math.max(0, tokens(usage.inputTokens) - cacheRead - cacheWrite);
  const output = tokens(usage.outputTokens);
  // Sum token×rate first and divide once: fewer rounding steps than dividing each term.
  const micro =
    uncached * price.inputPerMTok +
    cacheRead * (price.cacheReadPerMTok ?? price.inputPerMTok) +
    cacheWrite * (price.cacheWritePerMTok ?? price.inputPerMTok) +
    output * price.outputPerMTok;
  return micro / 1_000_000;
}

const MAX_DECIMALS = 10;

/**
 * A plain decimal string, never exponent notation (`String(1.5e-7)` is "1.5e-7", which headers and
 * chat UIs must not show): at most 10 decimal places, trailing zeros trimmed. 0.000015 → "0.000015".
 */
export function formatUsd(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`formatUsd: not a finite amount: ${n}`);
  // toFixed switches to exponent notation from 1e21 on; no real cost gets there, but stay plain anyway.
  if (Math.abs(n) >= 1e21) return BigInt(Math.round(n)).toString();
  let s = n.toFixed(MAX_DECIMALS);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  // A tiny negative rounds to "-0"; there is no such amount.
  return s === '-0' ? '0' : s;
}
