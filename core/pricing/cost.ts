/**
 * Turns normalised usage into dollars, and dollars into the one plain decimal every surface shows
 * (`usage.cost` in bodies and stream chunks, `x-gateway-cost-usd`, audit rows, `gateway usage`,
 * balances). Pure arithmetic: the hot path calls it on every response.
 */
import type { Usage } from '../usage.ts';
import type { ModelPrice, TokenRates } from './price.ts';

/** Token counts come from upstream JSON; a negative or non-finite count must not turn into a refund or NaN. */
const tokens = (n: number | undefined): number => (n !== undefined && Number.isFinite(n) && n > 0 ? n : 0);

/** Every amount is rounded to this many decimal places of a dollar (1e-10 USD) before anyone sees it. */
export const USD_DECIMALS = 10;
const SCALE = 10 ** USD_DECIMALS;

/** The one rounding rule: to 1e-10 USD, so sums and displays agree and float noise never shows. */
export function roundUsd(n: number): number {
  if (!Number.isFinite(n)) return 0;
  return Math.round(n * SCALE) / SCALE;
}

/** The rates for a prompt of `promptTokens`: the highest tier it is above, else the base rates. */
export function ratesFor(price: ModelPrice, promptTokens: number): TokenRates {
  const tiers = price.tiers;
  if (tiers === undefined) return price;
  let r: TokenRates = price;
  for (const t of tiers) if (promptTokens > t.above) r = t;
  return r;
}

/** The price of an image of `kind` (`size|quality`), falling back to `size|*`, `*|quality`, then `*`. */
export function perImagePrice(price: ModelPrice, kind: string | undefined): number | null {
  const table = price.perImageUsd;
  if (!table) return null;
  const [size = '*', quality = '*'] = (kind ?? '*|*').split('|');
  return table[`${size}|${quality}`] ?? table[`${size}|*`] ?? table[`*|${quality}`] ?? table['*'] ?? maxOf(table);
}

const maxOf = (t: Readonly<Record<string, number>>): number | null => {
  let m: number | null = null;
  for (const v of Object.values(t)) if (m === null || v > m) m = v;
  return m;
};

/**
 * Cost in USD, rounded by `roundUsd`. `inputTokens` includes cache reads and writes and audio/image
 * input (OpenAI semantics), so each part is charged at its own rate and only the rest at the plain
 * input rate. Reasoning is part of `outputTokens` (adapters normalise Gemini's separate
 * `thoughtsTokenCount` into it), so `reasoningTokens` is informational: adding it would bill thinking
 * twice. A long-context tier is picked from the prompt's size and applies to the whole call (as the
 * providers bill it). The upstream's own reported cost, when there is one, wins.
 */
export function costOf(usage: Usage, price: ModelPrice): number {
  if (usage.upstreamCostUsd !== undefined && Number.isFinite(usage.upstreamCostUsd) && usage.upstreamCostUsd >= 0) {
    return roundUsd(usage.upstreamCostUsd);
  }
  const input = tokens(usage.inputTokens);
  const output = tokens(usage.outputTokens);
  let micro = 0;
  if (input > 0 || output > 0) {
    const r = ratesFor(price, input);
    // Cache reads and writes are billed as reported even if an upstream's total leaves them out.
    const cacheRead = tokens(usage.cacheReadTokens);
    const audioCacheRead = Math.min(tokens(usage.audioCacheReadTokens), cacheRead);
    const cacheWrite = tokens(usage.cacheWriteTokens);
    const write1h = Math.min(tokens(usage.cacheWrite1hTokens), cacheWrite);
    const uncached = Math.max(0, input - cacheRead - cacheWrite);
    // Audio/image input tokens outside the cache; cached audio is already among the cache reads.
    const audioIn = Math.min(Math.max(0, tokens(usage.audioInputTokens) - audioCacheRead), uncached);
    const imageIn = Math.min(tokens(usage.imageInputTokens), uncached - audioIn);
    const plainIn = uncached - audioIn - imageIn;
    const audioOut = Math.min(tokens(usage.audioOutputTokens), output);
    const imageOut = Math.min(tokens(usage.imageOutputTokens), output - audioOut);
    const plainOut = output - audioOut - imageOut;
    const cacheReadRate = r.cacheReadPerMTok ?? r.inputPerMTok;
    // Sum token×rate first and divide once: fewer rounding steps than dividing each term.
    micro =
      plainIn * r.inputPerMTok +
      (cacheRead - audioCacheRead) * cacheReadRate +
      audioCacheRead * (price.audioCacheReadPerMTok ?? cacheReadRate) +
      (cacheWrite - write1h) * (r.cacheWritePerMTok ?? r.inputPerMTok) +
      write1h * (r.cacheWrite1hPerMTok ?? r.inputPerMTok * 2) +
      audioIn * (price.audioInputPerMTok ?? r.inputPerMTok) +
      imageIn * (price.imageInputPerMTok ?? r.inputPerMTok) +
      plainOut * r.outputPerMTok +
      audioOut * (price.audioOutputPerMTok ?? r.outputPerMTok) +
      imageOut * (price.imageOutputPerMTok ?? r.outputPerMTok);
  }
  let usd = micro / 1_000_000;
  // Per-unit prices apply only when the upstream counted no tokens (whisper-1 minutes, dall-e images).
  if (input === 0 && output === 0) {
    if (usage.audioSeconds !== undefined && price.perMinuteUsd != null) usd += (tokens(usage.audioSeconds) / 60) * price.perMinuteUsd;
    if (usage.images !== undefined) usd += tokens(usage.images) * (perImagePrice(price, usage.imageKind) ?? 0);
  }
  const tier = usage.serviceTier;
  if (tier !== undefined && price.serviceTierMultipliers) {
    const m = price.serviceTierMultipliers[tier];
    if (m !== undefined) usd *= m;
  }
  return roundUsd(usd);
}

/**
 * A plain decimal string, never exponent notation (`String(1.5e-7)` is "1.5e-7", which headers and
 * chat UIs must not show): at most 10 decimal places, trailing zeros trimmed. 0.000015 → "0.000015".
 */
export function formatUsd(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`formatUsd: not a finite amount: ${n}`);
  // toFixed switches to exponent notation from 1e21 on; no real cost gets there, but stay plain anyway.
  if (Math.abs(n) >= 1e21) return BigInt(Math.round(n)).toString();
  const s = n.toFixed(USD_DECIMALS);
  // Trailing zeros, then a bare point, trimmed (toFixed always writes the point here); no regex on the hot path.
  let end = s.length;
  while (s.charCodeAt(end - 1) === 48) end--;
  if (s.charCodeAt(end - 1) === 46) end--;
  const plain = s.slice(0, end);
  // A tiny negative rounds to "-0"; there is no such amount.
  return plain === '-0' ? '0' : plain;
}

/** Marks where `usage.cost` goes in a body; replaced by the formatted decimal after JSON.stringify. */
const COST_MARK = '__gateway_cost_usd__';
const COST_MARK_JSON = `"${COST_MARK}"`;

/**
 * JSON text of `body` with `usage.cost` as the plain decimal `formatUsd` prints: JSON.stringify would
 * write 2e-8 or 0.0000061499999999999996, which clients parse fine but people read and compare.
 * The marker is a JSON string, so no text inside the body (where quotes are escaped) can match it.
 */
export function stringifyWithCost(body: unknown, usage: Record<string, unknown> | null, cost: number | null): string {
  if (usage === null || cost === null) return JSON.stringify(body);
  usage.cost = COST_MARK;
  const text = JSON.stringify(body);
  usage.cost = cost;
  return text.replace(COST_MARK_JSON, formatUsd(cost));
}

/** A number token in exponent notation, between JSON punctuation (so never inside a quoted name). */
const EXPONENT_NUMBER = /(?<=[:[,]\s*)(-?\d+(?:\.\d+)?[eE][+-]?\d+)(?=\s*[,\]}])/g;

/**
 * JSON text of a value holding amounts of money (balances, usage summaries) with every number written
 * as a plain decimal: JSON.stringify prints 2e-8, which people and some parsers of ours do not read as
 * money. Amounts should already be rounded with `roundUsd`.
 */
export function stringifyMoney(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(EXPONENT_NUMBER, (n) => {
    const v = Number(n);
    return Number.isFinite(v) && Math.abs(v) < 1e21 ? formatUsd(v) : n;
  });
}
