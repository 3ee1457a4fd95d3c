/**
 * A minimal `multipart/form-data` reader (RFC 7578) for the audio endpoints: it finds each part's
 * name, filename and byte range without copying anything, so the gateway can read the text fields it
 * routes on (`model`, `stream`, `response_format`) and forward the body's bytes unchanged, rewriting
 * only the `model` field when the resolved name differs. No dependency, no streaming: the body is
 * already in memory (read under the size limit).
 */
import { badRequest } from '../errors.ts';

export interface MultipartPart {
  name: string;
  /** Set for file parts (even when empty); null for plain fields. */
  filename: string | null;
  contentType: string | null;
  /** The part's content is `body.subarray(start, end)`. */
  start: number;
  end: number;
}

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

/** The boundary of a `multipart/form-data` Content-Type, or null when it is something else. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType) return null;
  const [type, ...params] = contentType.split(';');
  if (type.trim().toLowerCase() !== 'multipart/form-data') return null;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq === -1 || p.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    let v = p.slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    // RFC 2046: 1 to 70 characters.
    return v.length > 0 && v.length <= 70 ? v : null;
  }
  return null;
}

const malformed = (why: string) => badRequest(`The multipart/form-data body could not be read: ${why}.`, 'invalid_multipart');

/** Splits a multipart body into parts; a body that does not follow the format is the client's 400. */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const between = Buffer.from(`\r\n--${boundary}`);
  let pos: number;
  if (body.subarray(0, delimiter.length).equals(delimiter)) pos = delimiter.length;
  else {
    // A preamble is allowed: the first delimiter then follows a line break.
    const at = body.indexOf(between);
    if (at === -1) throw malformed('no boundary delimiter found');
    pos = at + between.length;
  }
  const parts: MultipartPart[] = [];
  for (;;) {
    // After a delimiter: `--` closes the body; otherwise optional padding, then a line break.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts;
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) throw malformed('a boundary is not followed by a line break');
    pos += 2;
    let headerText: string;
    let start: number;
    if (body[pos] === 0x0d && body[pos + 1] === 0x0a) {
      headerText = '';
      start = pos + 2;
    } else {
      const headersEnd = body.indexOf(HEADERS_END, pos);
      if (headersEnd === -1) throw malformed('a part has no end of headers');
      headerText = body.toString('utf8', pos, headersEnd);
      start = headersEnd + HEADERS_END.length;
    }
    const end = body.indexOf(between, start);
    if (end === -1) throw malformed('the closing boundary is missing');
    parts.push(partFrom(headerText, start, end));
    pos = end + between.length;
  }
}

function partFrom(headerText: string, start: number, end: number): MultipartPart {
  let name: string | null = null;
  let filename: string | null = null;
  let contentType: string | null = null;
  for (const line of headerText.split(CRLF.toString())) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const header = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (header === 'content-type') contentType = value;
    if (header !== 'content-disposition') continue;
    for (const m of value.matchAll(/;\s*([^=;\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g)) {
      const key = m[1].toLowerCase();
      const raw = m[2].trim();
      const v = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
      if (key === 'name') name = v;
      else if (key === 'filename' || (key === 'filename*' && filename === null)) filename = v;
    }
  }
  if (name === null) throw malformed('a part has no Content-Disposition name');
  return { name, filename, contentType, start, end };
}

/** The text of a plain field part. */
export const fieldText = (body: Buffer, part: MultipartPart): string => body.toString('utf8', part.start, part.end);

/** A copy of the body with one part's content replaced; every other byte is kept as it was. */
export function replacePartContent(body: Buffer, part: MultipartPart, value: string): Buffer {
  return Buffer.concat([body.subarray(0, part.start), Buffer.from(value, 'utf8'), body.subarray(part.end)]);
}
