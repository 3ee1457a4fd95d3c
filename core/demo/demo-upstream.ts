/**
 * The `demo` provider: a small OpenAI-compatible server on a loopback port, started inside the
 * gateway, so the demo travels the same path as a real provider (adapter, streaming, accounting).
 * `demo-chat` replies `Demo reply to: <last user text>` and streams word by word; `demo-embedding`
 * returns deterministic vectors. Priced at $1 / $2 per million tokens (see the price book).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from '../gateway/node-http.ts';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens, warmTokenizer } from '../gateway/estimate.ts';

export const DEMO_CHAT_MODEL = 'demo-chat';
export const DEMO_EMBEDDING_MODEL = 'demo-embedding';
export const DEMO_MODELS = [DEMO_CHAT_MODEL, DEMO_EMBEDDING_MODEL];
const CREATED = 1_735_689_600; // 2025-01-01, a fixed date so listings are stable

export interface DemoUpstream {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startDemoUpstream(wordDelayMs = Number(process.env.GATEWAY_DEMO_DELAY_MS ?? 15)): Promise<DemoUpstream> {
  const server = createServer((req, res) => {
    route(req, res, wordDelayMs).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function route(req: IncomingMessage, res: ServerResponse, delay: number): Promise<void> {
  const url = req.url ?? '/';
  if (req.method === 'GET' && url === '/v1/models') {
    return json(res, 200, { object: 'list', data: DEMO_MODELS.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'demo' })) });
  }
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return json(res, 400, { error: { message: 'invalid JSON', type: 'invalid_request_error', param: null, code: 'invalid_json' } });
  }
  // The tokenizer (~70 MiB, a third of a start's CPU) loads with the first call that counts tokens, not at start:
  // a gateway that never serves the demo never pays for it.
  await warmTokenizer().catch(() => undefined);
  if (req.method === 'POST' && url === '/v1/chat/completions') return chat(body, res, delay);
  if (req.method === 'POST' && url === '/v1/embeddings') return embeddings(body, res);
  return json(res, 404, { error: { message: `demo provider has no ${url}`, type: 'invalid_request_error', param: null, code: 'not_found' } });
}

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: string; content?: unknown };
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p: { text?: unknown }) => (typeof p?.text === 'string' ? p.text : '')).join(' ');
  }
  return '';
}

function promptTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let n = 3;
  for (const m of messages) {
    const c = (m as { content?: unknown })?.content;
    n += 3 + countTokens(typeof c === 'string' ? c : JSON.stringify(c ?? ''));
  }
  return n;
}

/**
 * The most output tokens the request allows (`max_completion_tokens`, else `max_tokens`), or null for no cap.
 * A real provider stops there with `finish_reason: "length"`; a demo that ignored it let a budget's admission,
 * which reserves exactly that worst case, be overspent.
 */
function outputCap(body: Record<string, unknown>): number | null {
  for (const k of ['max_completion_tokens', 'max_tokens']) {
    const v = body[k];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 1) return v;
  }
  return null;
}

/**
 * The reply cut to at most `cap` tokens: the longest run of whole words that fits (a binary search over word
 * boundaries, so an echoed 100 KB prompt is counted a few times, not once per word), else characters of the
 * first word.
 */
export function demoReply(text: string, cap: number | null): { text: string; tokens: number; cut: boolean } {
  const whole = countTokens(text);
  if (cap === null || whole <= cap) return { text, tokens: whole, cut: false };
  const ends: number[] = [];
  for (const m of text.matchAll(/\S+\s*/g)) ends.push(m.index + m[0].length);
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (countTokens(text.slice(0, ends[mid - 1])) <= cap) lo = mid;
    else hi = mid - 1;
  }
  let out = lo === 0 ? '' : text.slice(0, ends[lo - 1]);
  if (out === '') {
    for (const ch of text) {
      if (countTokens(out + ch) > cap) break;
      out += ch;
    }
  }
  return { text: out, tokens: countTokens(out), cut: true };
}

/** `n` as OpenAI takes it: an integer from 1 (default 1); the gateway has already refused other values. */
function choiceCount(body: Record<string, unknown>): number {
  const n = body.n;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? Math.min(n, 128) : 1;
}

async function chat(body: Record<string, unknown>, res: ServerResponse, delay: number): Promise<void> {
  if (body.model !== DEMO_CHAT_MODEL) {
    return json(res, 404, { error: { message: `The demo provider has no chat model \`${String(body.model)}\`.`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
  }
  const reply = demoReply(`Demo reply to: ${lastUserText(body.messages)}`, outputCap(body));
  const finish = reply.cut ? 'length' : 'stop';
  const n = choiceCount(body);
  // Every choice is generated, and billed: n times the reply's tokens.
  const usage = { prompt_tokens: promptTokens(body.messages), completion_tokens: reply.tokens * n, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const id = `chatcmpl-demo${randomBytes(8).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  const indexes = Array.from({ length: n }, (_, i) => i);
  if (body.stream !== true) {
    return json(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: DEMO_CHAT_MODEL,
      choices: indexes.map((index) => ({ index, message: { role: 'assistant', content: reply.text, refusal: null, annotations: [] }, logprobs: null, finish_reason: finish })),
      usage,
      system_fingerprint: null,
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = { id, object: 'chat.completion.chunk', created, model: DEMO_CHAT_MODEL, system_fingerprint: null };
  const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
  for (const index of indexes) send({ ...base, choices: [{ index, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }] });
  const words = reply.text.match(/\S+\s*/g) ?? [];
  for (const w of words) {
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (res.destroyed) return;
    // Choices interleave, one chunk each, as OpenAI streams them.
    for (const index of indexes) send({ ...base, choices: [{ index, delta: { content: w }, logprobs: null, finish_reason: null }] });
  }
  for (const index of indexes) send({ ...base, choices: [{ index, delta: {}, logprobs: null, finish_reason: finish }] });
  const opts = body.stream_options as { include_usage?: boolean } | undefined;
  if (opts?.include_usage) send({ ...base, choices: [], usage });
  res.end('data: [DONE]\n\n');
}

/** A deterministic unit vector derived from the text, so equal inputs embed equally. */
export function demoVector(text: string, dims: number): number[] {
  const out: number[] = [];
  let block = createHash('sha256').update(text).digest();
  while (out.length < dims) {
    for (let i = 0; i + 1 < block.length && out.length < dims; i += 2) out.push((block.readUInt16LE(i) / 65535) * 2 - 1);
    block = createHash('sha256').update(block).digest();
  }
  const norm = Math.sqrt(out.reduce((s, v) => s + v * v, 0)) || 1;
  return out.map((v) => Math.fround(v / norm));
}

function embeddings(body: Record<string, unknown>, res: ServerResponse): void {
  if (body.model !== DEMO_EMBEDDING_MODEL) {
    return json(res, 404, { error: { message: `The demo provider has no embedding model \`${String(body.model)}\`.`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
  }
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : [];
  const dims = typeof body.dimensions === 'number' && body.dimensions > 0 ? Math.min(body.dimensions, 3072) : 256;
  const tokens = texts.reduce((n, t) => n + countTokens(t), 0);
  json(res, 200, {
    object: 'list',
    data: texts.map((t, index) => ({ object: 'embedding', index, embedding: demoVector(t, dims) })),
    model: DEMO_EMBEDDING_MODEL,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
