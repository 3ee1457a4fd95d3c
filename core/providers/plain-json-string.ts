/**
 * Helpers for reading the text of stream events that are relayed as sent, without `JSON.parse`: the
 * callers match the whole event with one anchored regular expression (so no other key can hide in it)
 * and decode only the captured string. Anything unusual answers `undefined`, and the caller parses.
 */

const NEEDS_DECODING = /[\\\u0000-\u001f]/;

/** The body of a JSON string literal (between its quotes), decoded; undefined when it is not valid JSON. */
export function decodeStringBody(raw: string): string | undefined {
  if (!NEEDS_DECODING.test(raw)) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/** A JSON string literal's body inside a regular expression: plain characters or escapes. */
export const STRING_BODY = '((?:[^"\\\\]|\\\\.)*)';
