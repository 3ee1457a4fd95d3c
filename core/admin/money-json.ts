/**
 * Money in the admin API's JSON as the ledger writes it: sums of many rows (a day's spend, a key's, a model's)
 * carry float noise (0.00025200000000000005), which the CLI rounds away and the tray and scripts read as is.
 * Every number under a key ending in `usd` is rounded to the ledger's unit.
 */
import { roundUsd } from '../pricing/cost.ts';

export function roundUsdFields<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => roundUsdFields(v)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = typeof v === 'number' && k.endsWith('usd') ? roundUsd(v) : roundUsdFields(v);
  }
  return out as T;
}
