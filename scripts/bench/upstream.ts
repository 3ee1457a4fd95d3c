/**
 * A fake OpenAI upstream that costs next to nothing: `POST .../chat/completions` answers a fixed JSON
 * body with usage, or (when the body says `"stream":true`) a fixed SSE stream of N content chunks, a
 * finish chunk, a usage chunk (when `include_usage` was asked, with `"usage":null` on every other chunk,
 * as OpenAI does) and `[DONE]`. Everything is pre-serialised at start.
 *
 * `POST /v1/messages` answers the same way in Anthropic's format (a message, or named events with pings
 * and usage in `message_start`/`message_delta`), for the `/v1/messages` pass-through row.
 *
 * Paths under `/flaky` fail a share of their requests with an OpenAI-style 500 (deterministically:
 * with rate 0.5, every other request). Paths under `/slow` stream with 20 ms between events (the client-abort
 * probe leaves mid-stream); a stream whose client left before its end counts as `cut`. `GET /__stats` returns
 * request counters.
 *
 * Run as a child: `node upstream.ts --port N [--chunks 32] [--delay-ms 0] [--flaky-rate 0.5]`;
 * prints `READY <port>` when listening.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FLAKY_PREFIX, MESSAGES_MODEL, MODEL, SLOW_PREFIX } from './common.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isFinite(n)) throw new Error(`--${name}: not a number`);
  return n;
}

const port = arg('port', 0);
const chunks = Math.max(1, Math.round(arg('chunks', 32)));
const delayMs = Math.max(0, arg('delay-ms', 0));
const flakyRate = Math.min(1, Math.max(0, arg('flaky-rate', 0.5)));

const created = Math.floor(Date.now() / 1000);
const ID = 'chatcmpl-benchupstream0000000001';
const USAGE = {
  prompt_tokens: 180,
  completion_tokens: chunks * 2,
  total_tokens: 180 + chunks * 2,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};
const word = (i: number): string => `word${i} `;

const completion = Buffer.from(
  JSON.stringify({
    id: ID,
    object: 'chat.completion',
    created,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: Array.from({ length: chunks }, (_, i) => word(i)).join(''), refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: USAGE,
    service_tier: 'default',
    system_fingerprint: 'fp_bench',
  }),
);

function sse(obj: unknown): Buffer {
  return Buffer.from(`data: ${JSON.stringify(obj)}\n\n`);
}

function streamEvents(withUsage: boolean): Buffer[] {
  const base = { id: ID, object: 'chat.completion.chunk', created, model: MODEL, service_tier: 'default', system_fingerprint: 'fp_bench' };
  const u = withUsage ? { usage: null } : {};
  const out: Buffer[] = [];
  out.push(sse({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], ...u }));
  for (let i = 0; i < chunks; i++) out.push(sse({ ...base, choices: [{ index: 0, delta: { content: word(i) }, logprobs: null, finish_reason: null }], ...u }));
  out.push(sse({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], ...u }));
  if (withUsage) out.push(sse({ ...base, choices: [], usage: USAGE }));
  out.push(Buffer.from('data: [DONE]\n\n'));
  return out;
}

const A_USAGE = { input_tokens: 180, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: chunks * 2 };
const message = Buffer.from(
  JSON.stringify({
    id: 'msg_benchupstream000000000001',
    type: 'message',
    role: 'assistant',
    model: MESSAGES_MODEL,
    content: [{ type: 'text', text: Array.from({ length: chunks }, (_, i) => word(i)).join('') }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: A_USAGE,
  }),
);
const named = (type: string, payload: object): Buffer => Buffer.from(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`);
const MESSAGE_EVENTS: Buffer[] = [
  named('message_start', {
    message: {
      id: 'msg_benchupstream000000000001',
      type: 'message',
      role: 'assistant',
      model: MESSAGES_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...A_USAGE, output_tokens: 1 },
    },
  }),
  named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  named('ping', {}),
  ...Array.from({ length: chunks }, (_, i) => named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: word(i) } })),
  named('content_block_stop', { index: 0 }),
  named('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: chunks * 2 } }),
  named('message_stop', {}),
];
const MESSAGE_HEADERS = { 'content-type': 'application/json', 'content-length': String(message.length), 'request-id': 'req_bench' };

const STREAM_WITH_USAGE = streamEvents(true);
const STREAM_PLAIN = streamEvents(false);
const FAILURE = Buffer.from(
  JSON.stringify({ error: { message: 'The server had an error while processing your request (bench).', type: 'server_error', param: null, code: null } }),
);
const NOT_FOUND = Buffer.from(JSON.stringify({ error: { message: 'not found (bench upstream)', type: 'invalid_request_error', param: null, code: null } }));

const JSON_HEADERS = { 'content-type': 'application/json', 'content-length': String(completion.length), 'x-request-id': 'req_bench' };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': 'req_bench' };

/** Request counters, and TCP connections accepted (to see whether callers reuse keep-alive connections). */
const stats = { chat: 0, stream: 0, flakyOk: 0, flakyFailed: 0, other: 0, connections: 0, cut: 0 };
const SLOW_DELAY_MS = 20;
let flakySeen = 0;

const STREAM_RE = /"stream"\s*:\s*true/;
const USAGE_RE = /"include_usage"\s*:\s*true/;

function readBody(req: IncomingMessage, done: (body: string) => void): void {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => done(parts.length === 1 ? parts[0].toString('latin1') : Buffer.concat(parts).toString('latin1')));
}

function writeStream(res: ServerResponse, events: Buffer[], gapMs: number): void {
  res.writeHead(200, SSE_HEADERS);
  res.on('close', () => {
    if (!res.writableFinished) stats.cut++;
  });
  if (gapMs === 0) {
    for (const e of events) res.write(e);
    res.end();
    return;
  }
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    res.write(events[i++]);
    if (i < events.length) setTimeout(next, gapMs);
    else res.end();
  };
  next();
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'GET' && url === '/__stats') {
    req.resume();
    const body = JSON.stringify(stats);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const flaky = url.startsWith(FLAKY_PREFIX);
  const slow = url.startsWith(SLOW_PREFIX);
  if (req.method === 'POST' && url === '/v1/messages') {
    readBody(req, (body) => {
      if (STREAM_RE.test(body)) {
        stats.stream++;
        writeStream(res, MESSAGE_EVENTS, delayMs);
        return;
      }
      stats.chat++;
      res.writeHead(200, MESSAGE_HEADERS);
      res.end(message);
    });
    return;
  }
  if (req.method !== 'POST' || !url.endsWith('/chat/completions')) {
    req.resume();
    stats.other++;
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': String(NOT_FOUND.length) });
    res.end(NOT_FOUND);
    return;
  }
  readBody(req, (body) => {
    if (flaky) {
      const n = flakySeen++;
      // Deterministic share: fail when the running count of failures due crosses an integer.
      if (Math.floor((n + 1) * flakyRate) > Math.floor(n * flakyRate)) {
        stats.flakyFailed++;
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': String(FAILURE.length) });
        res.end(FAILURE);
        return;
      }
      stats.flakyOk++;
    }
    if (STREAM_RE.test(body)) {
      stats.stream++;
      writeStream(res, USAGE_RE.test(body) ? STREAM_WITH_USAGE : STREAM_PLAIN, slow ? SLOW_DELAY_MS : delayMs);
      return;
    }
    stats.chat++;
    res.writeHead(200, JSON_HEADERS);
    res.end(completion);
  });
});

server.on('connection', () => {
  stats.connections++;
});

server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`READY ${typeof addr === 'object' && addr ? addr.port : port}\n`);
});

const stop = (): void => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Never outlive the benchmark: the parent's stdin pipe closes when it dies.
process.stdin.on('end', stop);
process.stdin.resume();
