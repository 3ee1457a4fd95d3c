/**
 * `usage.cost` written into an upstream's JSON answer as text, without re-serialising the body: the
 * answer went out as the upstream wrote it, only `"cost":…` added at the end of its top-level `usage`.
 * Returns null when that object cannot be found for certain; the caller then serialises as before.
 */
import { isDeepStrictEqual } from 'node:util';
import { formatUsd } from '../pricing/cost.ts';

const USAGE_KEY = '"usage":';
/** `usage":` (from its `u`): JSON is full of `"`, so a search from the quote stopped at every one (~8x slower). */
const AFTER_QUOTE = USAGE_KEY.slice(1);

/** Index of the next `"usage":` at or after `from`, or -1. */
function usageKey(text: string, from: number): number {
  for (let i = text.indexOf(AFTER_QUOTE, from + 1); i !== -1; i = text.indexOf(AFTER_QUOTE, i + 1)) {
    if (text.charCodeAt(i - 1) === 34) return i - 1;
  }
  return -1;
}

const isJsonSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

/** `text` is the upstream's JSON; `usage` is the parsed top-level `usage` object of that same text. */
export function spliceUsageCost(text: string, usage: Record<string, unknown>, cost: number): string | null {
  if ('cost' in usage) return null;
  const key = usageKey(text, 0);
  // One `"usage":` in the whole text: then it is the top-level one (any other would be a second match).
  if (key === -1 || usageKey(text, key + 1) !== -1) return null;
  let open = key + USAGE_KEY.length;
  while (isJsonSpace(text.charCodeAt(open))) open++;
  if (text.charCodeAt(open) !== 123) return null;
  const close = objectEnd(text, open);
  if (close === -1) return null;
  // The span must be that object. A text without `\\u` escapes writes every key literally, so its one
  // `"usage":` is the top-level key; otherwise (the top-level key may be escaped, and the one found a nested
  // one) the span must hold the same members with the same values.
  if (text.includes('\\u')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.slice(open, close + 1));
    } catch {
      return null;
    }
    if (!isDeepStrictEqual(parsed, usage)) return null;
  }
  let inner = open + 1;
  while (inner < close && isJsonSpace(text.charCodeAt(inner))) inner++;
  return `${text.slice(0, close)}${inner === close ? '' : ','}"cost":${formatUsd(cost)}${text.slice(close)}`;
}

/** Index of the `}` closing the object that opens at `open`, strings skipped; -1 if unbalanced. */
function objectEnd(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return c === 125 ? i : -1;
    }
  }
  return -1;
}
