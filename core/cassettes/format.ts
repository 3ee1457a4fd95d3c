/**
 * The cassette file: one pretty-printed JSON file per distinct request (endpoint + model + digest in
 * its name), holding the canonical request and every answer recorded for it, in recording order.
 * Pretty JSON rather than JSON lines: each file is one request, so a re-recording shows up in review
 * as a local diff of that request's answers, and stream chunks stay readable one per line. Key order
 * is fixed by this module, so the same recording always produces the same bytes.
 */
import { z } from 'zod';
import type { CanonicalJson, CanonicalRequest } from './canonical.ts';

const CASSETTE_VERSION = 1;

// Bodies came out of JSON.parse, so they are JSON values already: checking them deeply cost about a
// millisecond per file on first use and could only fail on something JSON cannot hold.
const jsonValue = z.custom<CanonicalJson>((v) => v !== undefined);

/**
 * The file's schemas, built on first use: a gateway that never reads a cassette does not pay for them at
 * start (5-10 ms of zod's set-up, in a start profile).
 */
function buildSchemas() {
  /** One write to the client, as written: text, or base64 when the bytes are not UTF-8. */
  const chunk = z.union([z.string(), z.object({ base64: z.string() }).strict()]);
  const interaction = z
    .object({
      recorded_at: z.string(),
      status: z.number().int(),
      /** The response headers that describe the answer (see `recorder.ts` for the ones left out). */
      headers: z.record(z.string(), z.string()),
      /** What the call cost when it was recorded (the header or the body's `usage.cost`), or null. */
      cost_usd: z.number().nullable(),
      /** A JSON body that re-serialises to the same bytes: kept as JSON for readability. */
      json: jsonValue.optional(),
      /** Any other body that is valid UTF-8. */
      text: z.string().optional(),
      /** A body that is not UTF-8. */
      base64: z.string().optional(),
      /** A stream: each write to the client, with its boundaries. */
      chunks: z.array(chunk).optional(),
    })
    .strict()
    .refine((i) => [i.json !== undefined, i.text !== undefined, i.base64 !== undefined, i.chunks !== undefined].filter(Boolean).length === 1, {
      message: 'an interaction has exactly one of json, text, base64 and chunks',
    });
  const file = z
    .object({
      version: z.literal(CASSETTE_VERSION),
      endpoint: z.string(),
      model: z.string().nullable(),
      digest: z.string(),
      request: jsonValue,
      interactions: z.array(interaction),
    })
    .strict();
  return { chunk, interaction, file };
}

type Schemas = ReturnType<typeof buildSchemas>;
let schemas: Schemas | null = null;
const cassetteSchemas = (): Schemas => (schemas ??= buildSchemas());

type RecordedChunk = z.infer<Schemas['chunk']>;
export type Interaction = z.infer<Schemas['interaction']>;
export type CassetteFile = z.infer<Schemas['file']>;

const slug = (s: string, max: number): string =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[_.]+|_+$/g, '')
    .slice(0, max) || '_';

/** `v1.chat.completions--gpt-4o-mini--0123456789ab.json` */
export function cassetteFileName(req: Pick<CanonicalRequest, 'endpoint' | 'model' | 'digest'>): string {
  const hex = req.digest.replace(/^sha256:/, '').slice(0, 12);
  return `${slug(req.endpoint.replace(/\//g, '.'), 60)}--${slug(req.model ?? 'no-model', 60)}--${hex}.json`;
}

export function newCassetteFile(req: CanonicalRequest): CassetteFile {
  return { version: CASSETTE_VERSION, endpoint: req.endpoint, model: req.model, digest: req.digest, request: req.body, interactions: [] };
}

/** Fixed key order at every level of the envelope; bodies keep the order they were written in. */
export function serializeCassette(file: CassetteFile): string {
  const ordered: CassetteFile = {
    version: file.version,
    endpoint: file.endpoint,
    model: file.model,
    digest: file.digest,
    request: file.request,
    interactions: file.interactions.map((i) => {
      const headers: Record<string, string> = {};
      for (const k of Object.keys(i.headers).sort()) headers[k] = i.headers[k];
      const o: Interaction = { recorded_at: i.recorded_at, status: i.status, headers, cost_usd: i.cost_usd };
      if (i.json !== undefined) o.json = i.json;
      if (i.text !== undefined) o.text = i.text;
      if (i.base64 !== undefined) o.base64 = i.base64;
      if (i.chunks !== undefined) o.chunks = i.chunks;
      return o;
    }),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

export function parseCassette(text: string, where: string): CassetteFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = cassetteSchemas().file.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${where}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return parsed.data;
}

/** The body bytes of a non-stream interaction, exactly as they were written. */
export function interactionBody(i: Interaction): Buffer {
  if (i.json !== undefined) return Buffer.from(JSON.stringify(i.json), 'utf8');
  if (i.text !== undefined) return Buffer.from(i.text, 'utf8');
  if (i.base64 !== undefined) return Buffer.from(i.base64, 'base64');
  return Buffer.concat((i.chunks ?? []).map(chunkBytes));
}

export function chunkBytes(c: RecordedChunk): Buffer {
  return typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.from(c.base64, 'base64');
}

/** Chooses how to keep a body: JSON when it round-trips byte for byte, else text, else base64. */
export function encodeBody(body: Buffer): Pick<Interaction, 'json' | 'text' | 'base64'> {
  const text = body.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(body)) return { base64: body.toString('base64') };
  try {
    const json: unknown = JSON.parse(text);
    if (JSON.stringify(json) === text) return { json: json as CanonicalJson };
  } catch {
    /* not JSON: kept as text */
  }
  return { text };
}

export function encodeChunk(chunk: Buffer): RecordedChunk {
  const text = chunk.toString('utf8');
  return Buffer.from(text, 'utf8').equals(chunk) ? text : { base64: chunk.toString('base64') };
}
