/**
 * The content delta of a plain OpenAI stream chunk, read without `JSON.parse`: parsing every chunk was
 * 12% of a relayed stream's CPU, and a chunk that carries neither usage nor an error is relayed as sent,
 * so only its text (for estimates and the audit row) is wanted. One anchored regular expression accepts
 * the common shape only (the usual top-level keys with plain values, one choice whose delta holds at most
 * a role and the content): no `usage`, `error` or unknown key can hide in it. Anything else answers
 * `undefined`, and the caller parses as before, so both ways give the same answer.
 */
import { STRING_BODY, decodeStringBody } from '../plain-json-string.ts';

/** A top-level member besides `choices`: the usual keys, each with a plain string or an integer. */
const MEMBER = '(?:"(?:id|object|model|system_fingerprint|service_tier|obfuscation)":"[^"\\\\\\u0000-\\u001f]*"|"created":\\d+)';
const DELTA = `\\{(?:"role":"assistant"(?:,"content":(?:"${STRING_BODY}"|null))?|"content":(?:"${STRING_BODY}"|null))?(?:,"refusal":null)?\\}`;
const CHOICE = `\\{"index":0,"delta":${DELTA}(?:,"logprobs":null)?,"finish_reason":(null|"[a-z_]+")\\}`;
/** `"usage":null` may end the chunk (OpenAI writes it on every chunk once usage is asked for). */
const PLAIN_CHUNK = new RegExp(`^\\{(?:${MEMBER},)*"choices":\\[${CHOICE}\\](?:,${MEMBER})*(,"usage":null)?\\}$`);
const USAGE_NULL_TAIL = ',"usage":null}';

export function plainChunkText(data: string): string | undefined {
  return plainChunk(data)?.text;
}

/**
 * The chunk to relay (a trailing `"usage":null` cut: the gateway alone places usage), its text, and
 * whether its one choice (index 0) carries a finish reason; undefined when unsure.
 */
export function plainChunk(data: string): { json: string; text: string; finishes: boolean } | undefined {
  const m = PLAIN_CHUNK.exec(data);
  if (m === null) return undefined;
  const raw = m[1] ?? m[2];
  const text = raw === undefined ? '' : decodeStringBody(raw);
  if (text === undefined) return undefined;
  return { json: m[4] === undefined ? data : `${data.slice(0, -USAGE_NULL_TAIL.length)}}`, text, finishes: m[3] !== 'null' };
}
