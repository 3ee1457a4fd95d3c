/**
 * Reads one string member of a JSON text without parsing it, for stream events that are relayed as
 * sent and only need their text (for estimates and the audit row). Answers `undefined` whenever it
 * is not certain, and the caller parses instead.
 */

/**
 * The value of `"key":` when that key occurs exactly once in `json` and its value is a string. A key
 * cannot hide inside a string value (its quotes would be escaped there), so one occurrence is the key.
 */
export function uniqueStringValue(json: string, key: string): string | undefined {
  const needle = `"${key}":`;
  const at = json.indexOf(needle);
  if (at === -1 || json.indexOf(`"${key}"`, at + 1) !== -1 || json.indexOf(`"${key}"`) !== at) return undefined;
  return stringAt(json, at + needle.length);
}

/** The JSON string literal starting at `start` (after optional spaces), decoded; undefined if there is none. */
export function stringAt(json: string, start: number): string | undefined {
  let i = start;
  while (json.charCodeAt(i) === 32) i++;
  if (json.charCodeAt(i) !== 34) return undefined;
  let escaped = false;
  for (let j = i + 1; j < json.length; j++) {
    const c = json.charCodeAt(j);
    if (c === 92) {
      escaped = true;
      j++;
      continue;
    }
    if (c === 34) {
      if (!escaped) return json.slice(i + 1, j);
      try {
        return JSON.parse(json.slice(i, j + 1)) as string;
      } catch {
        return undefined;
      }
    }
    if (c < 32) return undefined;
  }
  return undefined;
}
