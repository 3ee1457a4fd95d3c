/**
 * Node's HTTP parser rejects some requests before any handler runs (a malformed request line, headers
 * too large, headers too slow). By default it writes a bare `400 Bad Request`; the SDKs expect the
 * OpenAI envelope, so this writes one, with the status that fits, and closes the connection.
 */
import type { Duplex } from 'node:stream';

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

function classify(code: string | undefined): { status: number; code: string; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'request_header_fields_too_large', message: 'The request headers are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return { status: 408, code: 'request_timeout', message: 'The request headers did not arrive in time.' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'request_too_large', message: 'The chunked body\'s extensions are too large.' };
    default:
      return { status: 400, code: 'invalid_request', message: 'The HTTP request could not be parsed.' };
  }
}

export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // A peer that reset or went away has nobody left to read an answer.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const c = classify(err.code);
  const body = JSON.stringify({ error: { message: c.message, type: 'invalid_request_error', param: null, code: c.code } });
  socket.end(
    `HTTP/1.1 ${c.status} ${STATUS_TEXT[c.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
