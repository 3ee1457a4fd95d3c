/**
 * A request whose body was already read (to match it against the cassette) handed on to the normal
 * handler as if it were still arriving: same method, URL and headers, the same bytes, then the end.
 */
import type { IncomingMessage } from 'node:http';
import { IncomingMessage as IncomingMessageClass } from '../gateway/node-http.ts';

export function requestWithBody(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessageClass(req.socket);
  copy.method = req.method;
  copy.url = req.url;
  copy.httpVersion = req.httpVersion;
  copy.httpVersionMajor = req.httpVersionMajor;
  copy.httpVersionMinor = req.httpVersionMinor;
  copy.headers = req.headers;
  copy.rawHeaders = req.rawHeaders;
  if (body.length > 0) copy.push(body);
  copy.push(null);
  copy.complete = true;
  return copy;
}
