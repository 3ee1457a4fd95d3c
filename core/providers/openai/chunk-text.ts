/**
 * The content delta of a plain OpenAI stream chunk, read without `JSON.parse`: parsing every chunk was
 * 12% of a relayed stream's CPU, and a chunk that carries neither usage nor an error is relayed as sent,
 * so only its text (for estimates and the audit row) is wanted. Returns `undefined` whenever the chunk
 * is not plainly the common shape (one choice, `delta.content` a string, null or absent, no nested
 * values before it): the caller then parses it as before, so both ways give the same answer.
 */

/** Keys whose presence needs the full parse (usage lifted out, errors, Groq's usage, legacy `text`, logprobs). */
const NEEDS_PARSE = ['"usage"', '"error"', '"x_groq"', '"text"', '"logprobs":{', '"logprobs":['];

export function plainChunkText(data: string): string | undefined {
  const n = data.length;
  if (n < 2 || data.charCodeAt(0) !== 123 || data.charCodeAt(n - 1) !== 125) return undefined;
  for (const k of NEEDS_PARSE) if (data.includes(k)) return undefined;
  const choices = data.indexOf('"choices":[{');
  if (choices === -1 || data.indexOf('"choices"', choices + 1) !== -1 || data.indexOf('"choices"') !== choices) return undefined;
  const delta = data.indexOf('"delta":{', choices);
  if (delta === -1 || data.indexOf('"delta"', delta + 1) !== -1) return undefined;
  const content = data.indexOf('"content":', delta);
  if (content === -1) {
    // No content key anywhere: a role-only, tool-call or finish chunk; its text is ''.
    return data.indexOf('"content"') === -1 ? '' : undefined;
  }
  if (data.indexOf('"content"', content + 1) !== -1 || data.indexOf('"content"') !== content) return undefined;
  // Between `"delta":{` and `"content":` only flat members (strings, null, numbers, booleans): no nesting.
  for (let i = delta + 9; i < content; i++) {
    const c = data.charCodeAt(i);
    if (c === 123 || c === 91 || c === 92 || c === 125 || c === 93) return undefined; // { [ \ } ]
  }
  // ...and exactly one index object before it: the delta belongs to the first choice.
  if (data.lastIndexOf('{', delta) !== choices + 11) return undefined;
  const start = content + 10;
  if (data.startsWith('null', start)) return '';
  if (data.charCodeAt(start) !== 34) return undefined;
  let escaped = false;
  for (let i = start + 1; i < n; i++) {
    const c = data.charCodeAt(i);
    if (c === 92) {
      escaped = true;
      i++;
      continue;
    }
    if (c === 34) {
      const literal = data.slice(start, i + 1);
      if (!escaped) return literal.slice(1, -1);
      try {
        return JSON.parse(literal) as string;
      } catch {
        return undefined;
      }
    }
    if (c < 32) return undefined;
  }
  return undefined;
}
