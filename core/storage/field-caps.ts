/**
 * Caps on every field of an audit row, not only the bodies: a 40 MB model name or upstream error
 * message must cost the database, the log line and the event stream a few hundred bytes, not 40 MB.
 * A cut field ends with a marker saying how much was cut.
 */
import type { CallRow } from './audit-writer.ts';

export const MAX_NAME_CHARS = 256;
export const MAX_ERROR_CHARS = 4096;
export const MAX_ATTEMPTS_JSON_CHARS = 16 * 1024;

/** Cuts `text` to about `max` characters (marker included), never splitting a surrogate pair. */
export function capText(text: string, max: number): string;
export function capText(text: string | null, max: number): string | null;
export function capText(text: string | null, max: number): string | null {
  if (text === null || text.length <= max) return text;
  const marker = `…[truncated ${text.length} chars]`;
  let cut = Math.max(0, max - marker.length);
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return text.slice(0, cut) + marker;
}

const within = (text: string | null, max: number): boolean => text === null || text.length <= max;

/**
 * The row with every free-text field capped; bodies are capped by bytes in the writer. A row within every cap
 * (nearly all of them) is returned as it is: rows are built fresh per call, and copying one cost more than checking it.
 */
export function capCallRow(row: CallRow): CallRow {
  if (
    within(row.keyName, MAX_NAME_CHARS) && within(row.endpoint, MAX_NAME_CHARS) && within(row.modelRequested, MAX_NAME_CHARS) &&
    within(row.model, MAX_NAME_CHARS) && within(row.provider, MAX_NAME_CHARS) && within(row.errorType, MAX_NAME_CHARS) &&
    within(row.errorMessage, MAX_ERROR_CHARS) && within(row.priceVersion, MAX_NAME_CHARS) && within(row.attemptsJson, MAX_ATTEMPTS_JSON_CHARS)
  ) {
    return row;
  }
  return {
    ...row,
    keyName: capText(row.keyName, MAX_NAME_CHARS),
    endpoint: capText(row.endpoint, MAX_NAME_CHARS),
    modelRequested: capText(row.modelRequested, MAX_NAME_CHARS),
    model: capText(row.model, MAX_NAME_CHARS),
    provider: capText(row.provider, MAX_NAME_CHARS),
    errorType: capText(row.errorType, MAX_NAME_CHARS),
    errorMessage: capText(row.errorMessage, MAX_ERROR_CHARS),
    priceVersion: capText(row.priceVersion, MAX_NAME_CHARS),
    // Cutting JSON breaks it; readers of attempts_json tolerate that (they fall back to no attempts).
    attemptsJson: capText(row.attemptsJson, MAX_ATTEMPTS_JSON_CHARS),
  };
}
