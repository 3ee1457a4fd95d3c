/** Reads a request body up to the size limit; anything bigger is a 413, never a crash or a hang. */
import type { IncomingMessage } from 'node:http';
import { badRequest, requestTooLarge } from '../errors.ts';

export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    throw requestTooLarge(limitBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      req.resume();
      throw requestTooLarge(limitBytes);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

export async function readJsonObject(req: IncomingMessage, limitBytes: number): Promise<{ json: Record<string, unknown>; text: string }> {
  const buf = await readBody(req, limitBytes);
  if (buf.length === 0) throw badRequest('The request body is empty; send a JSON object.', 'invalid_json');
  const text = buf.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw badRequest(`We could not parse the JSON body of your request: ${(err as Error).message}`, 'invalid_json');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw badRequest('The request body must be a JSON object.', 'invalid_json');
  }
  return { json: parsed as Record<string, unknown>, text };
}
