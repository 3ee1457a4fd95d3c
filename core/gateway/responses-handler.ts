/**
 * `POST /v1/responses` (OpenAI Responses). Admission, failover, cost and audit as for chat. Each candidate
 * is served the way its upstream allows:
 * - OpenAI and Azure speak Responses: the body goes through with only `model` rewritten, the stream is
 *   relayed byte for byte and usage is read on the side from the terminal event;
 * - every other upstream is bridged: the request is parsed into the neutral model, sent through the
 *   provider's adapter, and the answer rendered back as a Response / the Responses event stream.
 */
import type { GatewayError } from '../errors.ts';
import { upstreamError } from '../errors.ts';
import { formatUsd } from '../pricing/cost.ts';
import type { CallRequest } from '../pipeline/call-model.ts';
import type { ResponseMeta } from '../pipeline/front-end.ts';
import { responsesFrontEnd, bridgeLimits } from '../frontends/openai-responses/index.ts';
import { ChatChunkDecoder, chatCompletionToResult, toChatBody } from '../frontends/openai-responses/chat-bridge.ts';
import { fromResponsesUsage } from '../frontends/openai-responses/usage.ts';
import { nativeResponsesRequest, servesResponsesNatively } from '../providers/responses-native.ts';
import type { CallContext, StreamPiece, StreamTranslator } from '../providers/types.ts';
import { SseParser } from '../upstream/sse-parser.ts';
import { classifyTransportError } from '../upstream/transport.ts';
import type { UpstreamResponse } from '../upstream/transport.ts';
import type { Usage } from '../usage.ts';
import { admit } from './admission.ts';
import { ClientGone, runAttempts } from './attempts.ts';
import type { AttemptOutcome, AttemptSuccess } from './attempts.ts';
import { priceUsage } from './call-record.ts';
import { successHeaders } from './chat-handler.ts';
import { countTokens, estimateUsage } from './estimate.ts';
import type { Candidate } from './model-router.ts';
import type { RequestContext } from './request-context.ts';
import { clientGone } from './request-context.ts';
import { readJsonBody, sendToProvider, timeoutsFor, transportFailure } from './upstream-call.ts';

type Served =
  | { mode: 'native-json'; json: Record<string, unknown> }
  | { mode: 'native-sse'; res: UpstreamResponse }
  | { mode: 'bridge-json'; json: Record<string, unknown>; usage: Usage | null }
  | { mode: 'bridge-sse'; res: UpstreamResponse; it: AsyncIterator<Buffer>; parser: SseParser; translator: StreamTranslator; pending: StreamPiece[] };

/** The text of a request, for estimating its prompt tokens. */
export function responsesPromptText(req: CallRequest): string {
  let out = req.system.map((p) => p.text).join('\n');
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'text' || p.type === 'reasoning') out += `\n${p.text}`;
      else if (p.type === 'tool-call') out += `\n${p.name} ${p.arguments}`;
      else if (p.type === 'tool-result') out += `\n${typeof p.content === 'string' ? p.content : p.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')}`;
    }
  }
  return out;
}

export async function handleResponses(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const req = responsesFrontEnd.parse(raw, ctx.req.headers);
  ctx.record.modelRequested = req.model;
  const promptText = responsesPromptText(req);
  const admission = admit(ctx, req.model, { inputTokens: () => countTokens(promptText), maxOutputTokens: req.maxOutputTokens });
  try {
    // What a bridged upstream cannot honour makes only the native candidates eligible.
    let candidates = admission.candidates;
    let dropped: string[] = [];
    let refusal: GatewayError | null = null;
    try {
      dropped = bridgeLimits(raw).droppedTools;
    } catch (err) {
      refusal = err as GatewayError;
    }
    if (refusal) {
      candidates = candidates.filter((c) => servesResponsesNatively(c.runtime.settings.type));
      if (candidates.length === 0) throw refusal;
    }
    const success = await runAttempts<Served>(ctx.deps, candidates, admission.strategy, (c, apiKey) => attempt(ctx, req, raw, c, apiKey), () => clientGone(ctx));
    ctx.record.servedBy(success);
    const extra: Record<string, string> = {};
    if (dropped.length > 0 && success.value.mode.startsWith('bridge')) extra['x-gateway-dropped-tools'] = dropped.join(',');
    const v = success.value;
    if (v.mode === 'native-json') await respondNativeJson(ctx, success, v.json, promptText);
    else if (v.mode === 'native-sse') await relayNativeStream(ctx, success, v.res, promptText);
    else if (v.mode === 'bridge-json') await respondBridgedJson(ctx, success, req, v, promptText, extra);
    else await relayBridgedStream(ctx, success, req, v, promptText, extra);
  } finally {
    admission.settle(ctx.record.priced.costUsd);
  }
}

async function attempt(ctx: RequestContext, req: CallRequest, raw: Record<string, unknown>, c: Candidate, apiKey: string | null): Promise<AttemptOutcome<Served>> {
  const deps = ctx.deps;
  const callCtx: CallContext = { provider: c.runtime.settings, model: c.model, apiKey, stream: req.stream };
  const timeouts = timeoutsFor(deps, req.stream);
  const adapter = c.runtime.adapter;
  if (servesResponsesNatively(c.runtime.settings.type)) {
    const sent = await sendToProvider(deps, adapter, nativeResponsesRequest(raw, callCtx), timeouts, ctx.abort.signal);
    if (!sent.ok) return sent;
    const type = String(sent.res.headers['content-type'] ?? '');
    if (req.stream && /^text\/event-stream/i.test(type)) return { ok: true, value: { mode: 'native-sse', res: sent.res } };
    const read = await readJsonBody(sent.res);
    if (!read.ok) return read;
    if (read.json === null || typeof read.json !== 'object') return malformed('The provider answered with JSON that is not an object.');
    return { ok: true, value: { mode: 'native-json', json: read.json as Record<string, unknown> } };
  }
  const sent = await sendToProvider(deps, adapter, adapter.chatRequest(toChatBody(req), callCtx), timeouts, ctx.abort.signal);
  if (!sent.ok) return sent;
  if (req.stream) return firstChunk(sent.res, adapter.chatStream(callCtx));
  const read = await readJsonBody(sent.res);
  if (!read.ok) return read;
  try {
    const r = adapter.chatResponse(read.json, callCtx);
    return { ok: true, value: { mode: 'bridge-json', json: r.body, usage: r.usage } };
  } catch (err) {
    return malformed(`unreadable response: ${(err as Error).message}`);
  }
}

const malformed = (message: string): AttemptOutcome<never> => ({
  ok: false,
  failure: { kind: 'http', failure: { status: 502, message, type: 'api_error', code: 'malformed_response' } },
});

/** Reads until the first good chunk, so a provider failing before it can still be replaced. */
async function firstChunk(res: UpstreamResponse, translator: StreamTranslator): Promise<AttemptOutcome<Served>> {
  const it = res.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const parser = new SseParser();
  const pending: StreamPiece[] = [];
  for (;;) {
    let r: IteratorResult<Buffer>;
    try {
      r = await it.next();
    } catch (err) {
      res.body.destroy();
      return transportFailure(classifyTransportError(err));
    }
    const pieces: StreamPiece[] = [];
    if (r.done) {
      for (const ev of parser.end()) pieces.push(...translator.push(ev));
      pieces.push(...translator.finish());
    } else {
      for (const ev of parser.push(r.value)) pieces.push(...translator.push(ev));
    }
    let good = false;
    for (const p of pieces) {
      if (!good && p.kind === 'error') {
        res.body.destroy();
        return { ok: false, failure: { kind: 'http', failure: { ...p.failure, status: p.failure.status >= 400 ? p.failure.status : 502 } } };
      }
      pending.push(p);
      if (p.kind === 'chunk') good = true;
    }
    if (good) return { ok: true, value: { mode: 'bridge-sse', res, it, parser, translator, pending } };
    if (r.done) {
      res.body.destroy();
      return malformed('the stream ended before any content');
    }
  }
}

function meta(ctx: RequestContext, s: AttemptSuccess<Served>): ResponseMeta {
  return { requestId: ctx.requestId, requestedModel: ctx.record.modelRequested ?? s.candidate.model, model: s.candidate.model, provider: s.candidate.provider };
}

function settle(ctx: RequestContext, s: AttemptSuccess<Served>, usage: Usage): void {
  const { deps, record } = ctx;
  record.usage = usage;
  record.priced = priceUsage(deps, s.candidate.runtime.settings, s.candidate.model, usage);
  deps.limiter.recordTokens(ctx.key.id, usage.inputTokens + usage.outputTokens);
}

function sendJsonAnswer(ctx: RequestContext, s: AttemptSuccess<Served>, text: string, extra: Record<string, string> = {}): void {
  const headers = { ...successHeaders(ctx, s.candidate.provider, s.candidate.model, s.attempts.length, ctx.record.priced.pricing), ...extra };
  if (ctx.record.priced.costUsd !== null) headers['x-gateway-cost-usd'] = formatUsd(ctx.record.priced.costUsd);
  ctx.record.responseBody = text;
  ctx.res.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  ctx.res.end(text);
}

async function respondNativeJson(ctx: RequestContext, s: AttemptSuccess<Served>, json: Record<string, unknown>, promptText: string): Promise<void> {
  const usage = fromResponsesUsage(json.usage) ?? (await estimateUsage(promptText, outputText(json), 1));
  settle(ctx, s, usage);
  const u = json.usage;
  if (ctx.record.priced.costUsd !== null && u !== null && typeof u === 'object') (u as Record<string, unknown>).cost = ctx.record.priced.costUsd;
  sendJsonAnswer(ctx, s, JSON.stringify(json));
}

function outputText(response: Record<string, unknown>): string {
  let out = '';
  for (const item of Array.isArray(response.output) ? (response.output as Array<Record<string, unknown>>) : []) {
    if (typeof item.arguments === 'string') out += item.arguments;
    if (typeof item.input === 'string') out += item.input;
    for (const part of Array.isArray(item.content) ? (item.content as Array<{ text?: unknown }>) : []) if (typeof part.text === 'string') out += part.text;
  }
  return out;
}

async function respondBridgedJson(
  ctx: RequestContext,
  s: AttemptSuccess<Served>,
  req: CallRequest,
  v: Extract<Served, { mode: 'bridge-json' }>,
  promptText: string,
  extra: Record<string, string>,
): Promise<void> {
  const result = chatCompletionToResult(v.json, req);
  const completion = result.choices[0]?.content.map((p) => (p.type === 'text' ? p.text : p.type === 'tool-call' ? p.arguments : '')).join('') ?? '';
  const usage = v.usage ?? (await estimateUsage(promptText, completion, req.messages.length + 1));
  settle(ctx, s, usage);
  const text = responsesFrontEnd.render(result, meta(ctx, s), { usage, costUsd: ctx.record.priced.costUsd, estimated: usage.estimated });
  sendJsonAnswer(ctx, s, text, extra);
}

function streamHeaders(ctx: RequestContext, s: AttemptSuccess<Served>, contentType: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...successHeaders(ctx, s.candidate.provider, s.candidate.model, s.attempts.length, null),
    ...extra,
    'content-type': contentType,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  };
}

/**
 * The native stream, relayed byte for byte. Usage comes from the terminal event's `response.usage`; a stream
 * cut before its terminal event ends with a `response.failed` so clients (Codex) see a failure, not a hang.
 */
async function relayNativeStream(ctx: RequestContext, s: AttemptSuccess<Served>, upstream: UpstreamResponse, promptText: string): Promise<void> {
  const { record } = ctx;
  const res = ctx.res;
  res.writeHead(200, streamHeaders(ctx, s, String(upstream.headers['content-type'] ?? 'text/event-stream')));
  const parser = new SseParser();
  let usage: Usage | null = null;
  let text = '';
  let terminal = false;
  let lastSeq = -1;
  let responseId: string | null = null;
  const watch = (events: ReturnType<SseParser['push']>) => {
    for (const ev of events) {
      if (ev.data === '[DONE]') continue;
      try {
        const j = JSON.parse(ev.data) as { type?: unknown; sequence_number?: unknown; delta?: unknown; response?: { id?: unknown; usage?: unknown } };
        if (typeof j.sequence_number === 'number') lastSeq = j.sequence_number;
        if (typeof j.response?.id === 'string') responseId = j.response.id;
        if (j.type === 'response.completed' || j.type === 'response.incomplete' || j.type === 'response.failed') {
          terminal = true;
          usage = fromResponsesUsage(j.response?.usage) ?? usage;
        }
        if (typeof j.delta === 'string' && text.length < 65_536) text += j.delta;
      } catch {
        /* not JSON: relayed as is */
      }
    }
  };
  let failure: string | null = null;
  try {
    for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
      if (record.ttftMs === null) record.ttftMs = record.elapsedMs();
      watch(parser.push(chunk));
      await write(ctx, chunk);
    }
    watch(parser.end());
    if (!terminal) failure = `The provider ${s.candidate.provider} closed the stream before its terminal event.`;
  } catch (err) {
    if (err instanceof ClientGone || clientGone(ctx)) {
      settle(ctx, s, usage ?? (await estimateUsage(promptText, text, 1)));
      throw new ClientGone();
    }
    const te = classifyTransportError(err);
    failure = `The provider ${s.candidate.provider} ${te.kind === 'timeout' ? 'went silent' : 'dropped the connection'} mid-stream (${te.message}).`;
  } finally {
    if (!upstream.body.destroyed) upstream.body.destroy();
  }
  settle(ctx, s, usage ?? (await estimateUsage(promptText, text, 1)));
  record.responseBody = text;
  if (failure !== null) {
    record.outcome = { status: 502, errorType: 'api_error', errorMessage: failure };
    ctx.deps.breaker.onFailure(s.candidate.provider);
    const event = { type: 'response.failed', sequence_number: lastSeq + 1, response: { id: responseId ?? `resp_${ctx.requestId.slice(4)}`, object: 'response', status: 'failed', output: [], error: { code: 'server_error', message: failure } } };
    if (!res.destroyed) res.end(`event: response.failed\ndata: ${JSON.stringify(event)}\n\n`);
    return;
  }
  res.end();
}

/** A bridged stream: the adapter's chat chunks → neutral events → Responses events. */
async function relayBridgedStream(
  ctx: RequestContext,
  s: AttemptSuccess<Served>,
  req: CallRequest,
  v: Extract<Served, { mode: 'bridge-sse' }>,
  promptText: string,
  extra: Record<string, string>,
): Promise<void> {
  const { record } = ctx;
  const res = ctx.res;
  res.writeHead(200, streamHeaders(ctx, s, 'text/event-stream; charset=utf-8', extra));
  const renderer = responsesFrontEnd.stream(req, meta(ctx, s));
  const decoder = new ChatChunkDecoder(req);
  let usage: Usage | null = null;
  let text = '';
  let ended = false;
  let failed: GatewayError | null = null;
  const handle = async (p: StreamPiece): Promise<void> => {
    if (ended) return;
    let out = '';
    if (p.kind === 'chunk') {
      if (record.ttftMs === null) record.ttftMs = record.elapsedMs();
      if (text.length < 65_536) text += p.text;
      for (const e of decoder.chunk(p.json)) out += renderer.event(e);
    } else if (p.kind === 'usage') {
      usage = p.usage;
    } else if (p.kind === 'error') {
      failed = upstreamError(p.failure.message, { attempts: s.attempts.length });
      ended = true;
    } else {
      for (const e of decoder.end()) out += renderer.event(e);
      ended = true;
    }
    if (out !== '') await write(ctx, out);
  };
  try {
    let pieces = v.pending;
    for (;;) {
      for (const p of pieces) await handle(p);
      if (ended) break;
      let r: IteratorResult<Buffer>;
      try {
        r = await v.it.next();
      } catch (err) {
        if (clientGone(ctx)) throw new ClientGone();
        const te = classifyTransportError(err);
        failed = upstreamError(`The provider ${s.candidate.provider} ${te.kind === 'timeout' ? 'went silent' : 'dropped the connection'} mid-stream (${te.message}).`, { timeout: te.kind === 'timeout', attempts: s.attempts.length });
        break;
      }
      pieces = [];
      if (r.done) {
        for (const ev of v.parser.end()) pieces.push(...v.translator.push(ev));
        pieces.push(...v.translator.finish());
        for (const p of pieces) await handle(p);
        if (!ended) failed = upstreamError(`The provider ${s.candidate.provider} closed the stream early.`, { attempts: s.attempts.length });
        break;
      }
      for (const ev of v.parser.push(r.value)) pieces.push(...v.translator.push(ev));
    }
  } catch (err) {
    if (err instanceof ClientGone) settle(ctx, s, usage ?? (await estimateUsage(promptText, text, req.messages.length + 1)));
    throw err;
  } finally {
    if (!v.res.body.destroyed) v.res.body.destroy();
  }
  const final: Usage = usage ?? (await estimateUsage(promptText, text, req.messages.length + 1));
  settle(ctx, s, final);
  record.responseBody = text;
  if (failed) {
    const f = failed as GatewayError;
    record.outcome = { status: f.status, errorType: f.type, errorMessage: f.message };
    ctx.deps.breaker.onFailure(s.candidate.provider);
    if (!res.destroyed) res.end(renderer.error(f));
    return;
  }
  await write(ctx, renderer.end({ usage: final, costUsd: record.priced.costUsd, estimated: final.estimated }));
  res.end();
}

async function write(ctx: RequestContext, chunk: string | Buffer): Promise<void> {
  const res = ctx.res;
  if (res.destroyed) throw new ClientGone();
  if (res.write(chunk)) return;
  const signal = ctx.abort.signal;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
  if (signal.aborted) throw new ClientGone();
}
