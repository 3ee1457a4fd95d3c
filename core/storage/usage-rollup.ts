/**
 * Usage over a time range from the running totals (`usage_hourly`, migration 6) instead of the calls
 * table: whole local hours come from the totals, and only the part of an hour a range starts or ends in
 * is read from `calls` (through its time index), so a 30-day summary reads a few thousand small rows
 * whether the table holds 1k calls or 1M. The buckets are local hours because every local day is whole
 * hours in every time zone (half-hour offsets too), so `by day` stays exact.
 */

/** One row of `usage_rows`: a whole-hour bucket, or one call (requests = 1) at a range's ragged edge. */
export const USAGE_ROWS_CTE = `usage_rows AS (
  SELECT hour_start AS t, key_id, key_name, model, provider, requests, input_tokens, output_tokens, cached_tokens,
         cache_write_tokens, reasoning_tokens, cost_usd, errors, unpriced, unpriced_ok, estimated
  FROM usage_hourly WHERE hour_start >= @fullFrom AND hour_start < @fullTo
  UNION ALL
  SELECT time, COALESCE(key_id, ''), COALESCE(key_name, ''), COALESCE(model, model_requested, '(none)'),
         COALESCE(provider, ''), 1, input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens,
         COALESCE(cost_usd, 0), status >= 400, pricing = 'unpriced' AND provider IS NOT NULL,
         pricing = 'unpriced' AND provider IS NOT NULL AND status < 400, pricing = 'estimated'
  FROM calls WHERE (time >= @edgeFrom1 AND time < @edgeTo1) OR (time >= @edgeFrom2 AND time < @edgeTo2)
)`;

export interface UsageRangeParams {
  [name: string]: number;
  fullFrom: number;
  fullTo: number;
  edgeFrom1: number;
  edgeTo1: number;
  edgeFrom2: number;
  edgeTo2: number;
}

const LOWEST = Number.MIN_SAFE_INTEGER;
const HIGHEST = Number.MAX_SAFE_INTEGER;

/** The start of the local hour `ms` falls in (`usage_hourly.hour_start`). */
export function localHourFloor(ms: number): number {
  const d = new Date(ms);
  d.setMinutes(0, 0, 0);
  return d.getTime();
}

/** `ms` itself when it is a local hour's start, else the next local hour's start. */
export function localHourCeil(ms: number): number {
  const floor = localHourFloor(ms);
  if (floor === ms) return ms;
  const d = new Date(ms);
  d.setMinutes(60, 0, 0);
  return d.getTime();
}

/** The parameters of USAGE_ROWS_CTE for calls at or after `since` and before `until` (both unix ms). */
export function usageRangeParams(since?: number, until?: number): UsageRangeParams {
  const lo = since ?? LOWEST;
  const hi = until ?? HIGHEST;
  const fullFrom = since === undefined ? LOWEST : localHourCeil(since);
  const fullTo = until === undefined ? HIGHEST : localHourFloor(until);
  if (fullFrom >= fullTo) {
    // The whole range lies inside one hour (or is empty): read its calls.
    return { fullFrom: 0, fullTo: 0, edgeFrom1: lo, edgeTo1: hi, edgeFrom2: 0, edgeTo2: 0 };
  }
  return { fullFrom, fullTo, edgeFrom1: lo, edgeTo1: fullFrom, edgeFrom2: fullTo, edgeTo2: hi };
}
