/**
 * The canonical form of a client's request, which is what a cassette matches on: the endpoint path and
 * the body with JSON keys sorted at every level and volatile fields left out, or for multipart bodies
 * each field by name and each file by its SHA-256. Two requests that mean the same call get the same
 * digest whatever SDK, language or key order sent them.
 */
import { createHash } from 'node:crypto';
import { fieldText, multipartBoundary, parseMultipart } from '../gateway/multipart.ts';
import type { MultipartPart } from '../gateway/multipart.ts';

/**
 * Top-level body fields that name who or when rather than what is asked, so they differ between two
 * runs of the same test: end-user ids, free-form metadata (Anthropic's `metadata.user_id`, Codex's
 * `client_metadata`), cache-routing keys (Codex sends its conversation id as `prompt_cache_key`).
 * Everything else counts, including `stream` and `stream_options` (they change the shape of the
 * answer) and `seed`.
 */
export const VOLATILE_FIELDS: readonly string[] = ['user', 'metadata', 'client_metadata', 'prompt_cache_key', 'safety_identifier'];

export type CanonicalJson = null | boolean | number | string | CanonicalJson[] | { [k: string]: CanonicalJson };

export interface CanonicalRequest {
  endpoint: string;
  /** The `model` the client asked for, or null when the body names none. */
  model: string | null;
  stream: boolean;
  /** The body as matched: sorted keys, volatile fields removed; multipart files replaced by their hash. */
  body: CanonicalJson;
  /** `sha256:` + hex of the canonical JSON text of endpoint and body. */
  digest: string;
}

/** Sorts keys at every level; drops `undefined` like JSON.stringify does. */
function sortKeys(value: unknown): CanonicalJson {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean' ? value : null;
  }
  if (Array.isArray(value)) return value.map(sortKeys);
  const out: { [k: string]: CanonicalJson } = {};
  for (const k of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = sortKeys(v);
  }
  return out;
}

function digestOf(endpoint: string, body: CanonicalJson): string {
  return `sha256:${createHash('sha256').update(JSON.stringify({ endpoint, body })).digest('hex')}`;
}

function withoutVolatile(json: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) if (!VOLATILE_FIELDS.includes(k)) out[k] = v;
  return out;
}

function fromJson(endpoint: string, raw: Buffer): CanonicalRequest | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const json = parsed as Record<string, unknown>;
  const body = sortKeys(withoutVolatile(json));
  return { endpoint, model: typeof json.model === 'string' ? json.model : null, stream: json.stream === true, body, digest: digestOf(endpoint, body) };
}

function fromMultipart(endpoint: string, raw: Buffer, boundary: string): CanonicalRequest | null {
  let parts: MultipartPart[];
  try {
    parts = parseMultipart(raw, boundary);
  } catch {
    return null;
  }
  // Repeated names (`timestamp_granularities[]`) keep their order; the file name is left out (temporary
  // files differ between runs), the bytes are what matter.
  const fields: Record<string, CanonicalJson[]> = {};
  for (const p of parts) {
    if (VOLATILE_FIELDS.includes(p.name)) continue;
    const value: CanonicalJson =
      p.filename === null
        ? fieldText(raw, p)
        : { sha256: createHash('sha256').update(raw.subarray(p.start, p.end)).digest('hex'), bytes: p.end - p.start, content_type: p.contentType };
    (fields[p.name] ??= []).push(value);
  }
  const flat: Record<string, CanonicalJson> = {};
  for (const [k, v] of Object.entries(fields)) flat[k] = v.length === 1 ? v[0] : v;
  const body = sortKeys(flat);
  const model = typeof flat.model === 'string' ? flat.model.trim() : null;
  const stream = typeof flat.stream === 'string' && flat.stream.trim() === 'true';
  return { endpoint, model, stream, body, digest: digestOf(endpoint, body) };
}

/**
 * The canonical request, or null when the body is neither a JSON object nor readable multipart: such a
 * request is the handler's to refuse (400) and is never recorded or replayed.
 */
export function canonicalRequest(endpoint: string, contentType: string | undefined, raw: Buffer): CanonicalRequest | null {
  const boundary = multipartBoundary(contentType);
  return boundary ? fromMultipart(endpoint, raw, boundary) : fromJson(endpoint, raw);
}

/** The top-level fields whose values differ between two canonical bodies (for a miss's "closest" hint). */
export function differingFields(a: CanonicalJson, b: CanonicalJson): string[] {
  const obj = (v: CanonicalJson): Record<string, CanonicalJson> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {});
  const ao = obj(a);
  const bo = obj(b);
  const names = [...new Set([...Object.keys(ao), ...Object.keys(bo)])].sort();
  return names.filter((k) => JSON.stringify(ao[k]) !== JSON.stringify(bo[k]));
}
