/**
 * `usage.cost` written into an upstream's JSON answer as text, without re-serialising the body: the
 * answer went out as the upstream wrote it, only `"cost":…` added at the end of its top-level `usage`.
 * Returns null when that object cannot be found for certain; the caller then serialises as before.
 */
import { formatUsd } from '../../pricing/cost.ts';

const USAGE_KEY = '"usage":';

/** `text` is the upstream's JSON; `usage` is the parsed top-level `usage` object of that same text. */
export function spliceUsageCost(text: string, usage: Record<string, unknown>, cost: number): string | null {
  if ('cost' in usage) return null;
  const key = text.indexOf(USAGE_KEY);
  // One `"usage":` in the whole text: then it is the top-level one (any other would be a second match).
  if (key === -1 || text.indexOf(USAGE_KEY, key + 1) !== -1) return null;
  let open = key + USAGE_KEY.length;
  while (text.charCodeAt(open) === 32 || text.charCodeAt(open) === 10 || text.charCodeAt(open) === 13 || text.charCodeAt(open) === 9) open++;
  if (text.charCodeAt(open) !== 123) return null;
  const close = objectEnd(text, open);
  if (close === -1) return null;
  // The span must be that object (guards against a `usage` written with escapes elsewhere): the same
  // members with the same values, compared without serialising either side.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(open, close + 1));
  } catch {
    return null;
  }
  if (!sameJson(parsed, usage)) return null;
  let empty = true;
  for (let i = open + 1; i < close && empty; i++) {
    const c = text.charCodeAt(i);
    empty = c === 32 || c === 10 || c === 13 || c === 9;
  }
  return `${text.slice(0, close)}${empty ? '' : ','}"cost":${formatUsd(cost)}${text.slice(close)}`;
}

/** Deep equality of two JSON values (as JSON.parse gives them). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k in ao) {
    if (!Object.hasOwn(bo, k) || !sameJson(ao[k], bo[k])) return false;
    n++;
  }
  for (const k in bo) if (Object.hasOwn(bo, k)) n--;
  return n === 0;
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
