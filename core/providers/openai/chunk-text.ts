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
const TAIL = `"choices":\\[${CHOICE}\\](?:,${MEMBER})*(,"usage":null)?\\}$`;
/** Groups: 1 the members before `choices`, 2 or 3 the content, 4 the finish reason, 5 a trailing `"usage":null`. */
const PLAIN_CHUNK = new RegExp(`^(\\{(?:${MEMBER},)*)${TAIL}`);
/** The same from `choices` on, for a chunk whose members before it are those of a chunk already matched (group 1 empty). */
const PLAIN_TAIL = new RegExp(`^()${TAIL}`);
const USAGE_NULL_TAIL = ',"usage":null}';

/** Whether a chunk's text ends its object with `"usage":null`, a member at its top level. */
export const endsWithUsageNull = (data: string): boolean => data.endsWith(USAGE_NULL_TAIL);

/** The chunk without its trailing `"usage":null` (`endsWithUsageNull` must hold): cut as text, not re-serialised. */
export const withoutUsageNull = (data: string): string => `${data.slice(0, -USAGE_NULL_TAIL.length)}}`;

type PlainChunk = { json: string; text: string; finishes: boolean };

export function plainChunkText(data: string): string | undefined {
  return plainChunk(data)?.text;
}

/**
 * The chunk to relay (a trailing `"usage":null` cut: the gateway alone places usage), its text, and
 * whether its one choice (index 0) carries a finish reason; undefined when unsure.
 */
export function plainChunk(data: string): PlainChunk | undefined {
  const m = PLAIN_CHUNK.exec(data);
  return m === null ? undefined : fromMatch(data, m);
}

/**
 * `plainChunk` for the chunks of one stream. They all start with the same members (id, object, created,
 * model...), so once a chunk matched, a chunk that starts with the same text is matched from `choices` on:
 * ~50 of the ~180 ns a chunk. Anything else is matched whole, as `plainChunk` does.
 */
export class PlainChunkReader {
  #head: string | null = null;

  read(data: string): PlainChunk | undefined {
    const head = this.#head;
    if (head !== null && data.length > head.length && data.slice(0, head.length) === head) {
      const m = PLAIN_TAIL.exec(data.slice(head.length));
      if (m !== null) return fromMatch(data, m);
    }
    const m = PLAIN_CHUNK.exec(data);
    if (m === null) return undefined;
    this.#head = m[1];
    return fromMatch(data, m);
  }
}

function fromMatch(data: string, m: RegExpExecArray): PlainChunk | undefined {
  const raw = m[2] ?? m[3];
  const text = raw === undefined ? '' : decodeStringBody(raw);
  if (text === undefined) return undefined;
  return { json: m[5] === undefined ? data : withoutUsageNull(data), text, finishes: m[4] !== 'null' };
}
