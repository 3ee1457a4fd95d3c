/**
 * Streaming chat. Headers are held until the first good upstream event, so until then a failing
 * provider can still be replaced. After that, chunks are relayed as they arrive with backpressure;
 * usage is always requested upstream and shown only when the client asked; an error after the
 * first byte ends the stream with an `error` event and no `[DONE]`.
 */
import type { ServerResponse } from 'node:http';
import { stringifyWithCost } from '../pricing/cost.ts';
import { toOpenAIUsage } from '../usage.ts';
import type { Usage } from '../usage.ts';
import type { CallContext, ChatRequest, StreamPiece, StreamTranslator, UpstreamRequest } from '../providers/types.ts';
import { rejectsStreamOptions } from '../providers/openai/request.ts';
import { SseParser } from '../upstream/sse-parser.ts';
import { classifyTransportError } from '../upstream/transport.ts';
import type { UpstreamResponse } from '../upstream/transport.ts';
import type { Admission } from './admission.ts';
import { ClientGone, runAttempts } from './attempts.ts';
import type { AttemptOutcome } from './attempts.ts';
import { priceUsage } from './call-record.ts';
import { successHeaders } from './chat-handler.ts';
import { clientWantsUsage } from './chat-validate.ts';
import { estimateUsage } from './estimate.ts';
import type { Candidate } from './model-router.ts';
import type { RequestContext } from './request-context.ts';
import { clientGone } from './request-context.ts';
import { sendToProvider, timeoutsFor, transportFailure } from './upstream-call.ts';

interface OpenStream {
  res: UpstreamResponse;
  it: AsyncIterator<Buffer>;
  parser: SseParser;
  translator: StreamTranslator;
  /** Pieces already read while waiting for the first good event. */
  pending: StreamPiece[];
}

const STREAM_OPTIONS_REFUSED = /stream_options|include_usage/i;

/** What differs between the streamed endpoints (chat, legacy completions); the relay is the same. */
export interface StreamEndpoint {
  /** The upstream request for a candidate (asks for usage unless the provider is known to refuse `stream_options`). */
  request(c: Candidate, callCtx: CallContext): UpstreamRequest;
  /** The usage to record when the upstream reported none; `text` is the streamed text. */
  estimate(text: string): Promise<Usage>;
  /** Whether the client asked for the usage chunk (`stream_options.include_usage`). */
  wantsUsage: boolean;
}

export function streamChat(ctx: RequestContext, body: ChatRequest, admission: Admission, promptText: string): Promise<number | null> {
  return streamCall(ctx, admission, {
    request: (c, callCtx) => c.runtime.adapter.chatRequest(body, callCtx),
    estimate: (text) => estimateUsage(promptText, text, body.messages.length),
    wantsUsage: clientWantsUsage(body),
  });
}

/** Streams one call over the admitted candidates; returns its cost (null when unknown or failed). */
export async function streamCall(ctx: RequestContext, admission: Admission, endpoint: StreamEndpoint): Promise<number | null> {
  const { deps, record } = ctx;
  const timeouts = timeoutsFor(deps, true);

  const open = async (c: Parameters<Parameters<typeof runAttempts>[3]>[0], apiKey: string | null, retried: boolean): Promise<AttemptOutcome<OpenStream>> => {
    const callCtx = { provider: c.runtime.settings, model: c.model, apiKey, stream: true };
    const sent = await sendToProvider(deps, c.runtime.adapter, endpoint.request(c, callCtx), timeouts, ctx.abort.signal);
    if (!sent.ok) {
      const f = sent.failure;
      // An upstream that refuses stream_options is retried once without it, and remembered.
      if (!retried && f.kind === 'http' && (f.failure.status === 400 || f.failure.status === 422) && STREAM_OPTIONS_REFUSED.test(f.failure.message) && !rejectsStreamOptions(callCtx)) {
        deps.live.learn(c.provider, { streamOptions: false });
        return open({ ...c, runtime: deps.live.providersByName.get(c.provider) ?? c.runtime }, apiKey, true);
      }
      return sent;
    }
    return firstEvent(sent.res, c.runtime.adapter.chatStream(callCtx));
  };

  const success = await runAttempts<OpenStream>(deps, admission.candidates, admission.strategy, (c, k) => open(c, k, false), () => clientGone(ctx));
  const { candidate } = success;
  record.servedBy(success);

  const res = ctx.res;
  res.writeHead(200, {
    ...successHeaders(ctx, candidate.provider, candidate.model, success.attempts.length, null),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });

  const relay = new Relay(ctx, res);
  const stream = success.value;
  // A stream cut short (client gone, provider failed mid-way) still used tokens: bill what was delivered,
  // from the upstream's usage when it came, else an estimate of the prompt and the text relayed so far.
  const settlePartial = async (): Promise<void> => {
    const usage = relay.usage ?? partialUsage(stream.translator.usageSoFar?.() ?? null, await endpoint.estimate(relay.text));
    record.usage = usage;
    record.priced = priceUsage(deps, candidate.runtime.settings, candidate.model, usage);
    record.responseBody = relay.text;
    deps.limiter.recordTokens(ctx.key.id, usage.inputTokens + usage.outputTokens);
  };
  let pieces = stream.pending;
  try {
    for (;;) {
      for (const p of pieces) await relay.handle(p);
      if (relay.done) break;
      let r: IteratorResult<Buffer>;
      try {
        r = await stream.it.next();
      } catch (err) {
        if (clientGone(ctx)) throw new ClientGone();
        const te = classifyTransportError(err);
        relay.fail(te.kind === 'timeout' ? 504 : 502, te.kind === 'timeout' ? 'upstream_timeout' : 'upstream_error', `The provider ${candidate.provider} ${te.kind === 'timeout' ? 'went silent' : 'dropped the connection'} mid-stream (${te.message}).`);
        break;
      }
      if (r.done) {
        pieces = [];
        for (const ev of stream.parser.end()) pieces.push(...stream.translator.push(ev));
        pieces.push(...stream.translator.finish());
        for (const p of pieces) await relay.handle(p);
        if (!relay.done) relay.fail(502, 'upstream_error', `The provider ${candidate.provider} closed the stream early.`);
        break;
      }
      pieces = [];
      for (const ev of stream.parser.push(r.value)) pieces.push(...stream.translator.push(ev));
    }
  } catch (err) {
    if (err instanceof ClientGone) await settlePartial();
    throw err;
  } finally {
    // After a complete stream only the body's end is left: read it rather than destroy() the body,
    // which builds a RequestAbortedError and formats its stack (~6% of a stream's CPU in the bench).
    if (!stream.res.body.destroyed) {
      if (relay.done && !relay.failed) void finishBody(stream.it, stream.res.body);
      else stream.res.body.destroy();
    }
  }
  if (relay.failed || clientGone(ctx)) {
    // A provider that breaks streams mid-way is unhealthy even though its first byte counted as a success.
    if (relay.failed && !clientGone(ctx)) deps.breaker.onFailure(candidate.provider);
    await settlePartial();
    if (relay.failed) return record.priced.costUsd;
    throw new ClientGone();
  }

  // Completed: settle usage and cost, then the optional usage chunk and [DONE].
  let usage: Usage | null = relay.usage;
  if (!usage) usage = await endpoint.estimate(relay.text);
  const tier = relay.usageChunk?.service_tier;
  if (typeof tier === 'string') usage = { ...usage, serviceTier: tier };
  record.usage = usage;
  record.priced = priceUsage(deps, candidate.runtime.settings, candidate.model, usage);
  deps.limiter.recordTokens(ctx.key.id, usage.inputTokens + usage.outputTokens);
  if (endpoint.wantsUsage) {
    const chunk: Record<string, unknown> = relay.usageChunk ? { ...relay.usageChunk } : { ...relay.template(), choices: [] };
    const u = relay.usageChunk && !usage.estimated && !record.usage?.clamped ? { ...(chunk.usage as Record<string, unknown>) } : toOpenAIUsage(usage);
    chunk.usage = u;
    await relay.write(`data: ${stringifyWithCost(chunk, u, record.priced.costUsd)}\n\n`);
  }
  await relay.write('data: [DONE]\n\n');
  res.end();
  record.responseBody = relay.text;
  return record.priced.costUsd;
}

/**
 * A cut stream's usage: what the upstream already reported (Anthropic's `message_start` knows the whole
 * prompt, cache included) with the output that was relayed, whichever count is larger; estimated.
 */
function partialUsage(reported: Usage | null, estimated: Usage): Usage {
  if (reported === null) return estimated;
  return { ...reported, outputTokens: Math.max(reported.outputTokens, estimated.outputTokens), estimated: true };
}

/** Reads what is left of a finished upstream stream (normally just its end); cuts it after 64 KiB or 1 s. */
async function finishBody(it: AsyncIterator<Buffer>, body: UpstreamResponse['body']): Promise<void> {
  const timer = setTimeout(() => body.destroy(), 1_000);
  let bytes = 0;
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      bytes += r.value.length;
      if (bytes > 65_536) break;
    }
    body.destroy();
  } catch {
    /* reset or cut: nothing more to do */
  } finally {
    clearTimeout(timer);
  }
}

/** Reads until the first good chunk; anything before it (errors, an early close) is a failed attempt. */
async function firstEvent(res: UpstreamResponse, translator: StreamTranslator): Promise<AttemptOutcome<OpenStream>> {
  const it = res.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const parser = new SseParser();
  const pending: StreamPiece[] = [];
  const fail = (status: number, message: string): AttemptOutcome<OpenStream> => {
    res.body.destroy();
    return { ok: false, failure: { kind: 'http', failure: { status, message, type: 'api_error', code: 'upstream_error' } } };
  };
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
      if (!good && p.kind === 'error') return fail(p.failure.status >= 400 ? p.failure.status : 502, p.failure.message);
      // Everything read with the first good chunk is kept: later pieces of this read (even [DONE]) belong to the relay.
      pending.push(p);
      if (p.kind === 'chunk') good = true;
    }
    if (good) return { ok: true, value: { res, it, parser, translator, pending } };
    if (r.done) return fail(502, 'the stream ended before any content');
  }
}

/** Writes pieces to the client and keeps what the end of the stream needs. */
class Relay {
  done = false;
  failed = false;
  text = '';
  usage: Usage | null = null;
  usageChunk: Record<string, unknown> | null = null;
  private firstChunk: string | null = null;
  private readonly ctx: RequestContext;
  private readonly res: ServerResponse;

  constructor(ctx: RequestContext, res: ServerResponse) {
    this.ctx = ctx;
    this.res = res;
  }

  async handle(p: StreamPiece): Promise<void> {
    if (this.done) return;
    switch (p.kind) {
      case 'chunk':
        if (this.firstChunk === null) {
          this.firstChunk = p.json;
          this.ctx.record.ttftMs = this.ctx.record.elapsedMs();
        }
        this.text += p.text;
        await this.write(`data: ${p.json}\n\n`);
        return;
      case 'usage':
        this.usage = p.usage;
        this.usageChunk = p.chunk;
        return;
      case 'error':
        this.fail(p.failure.status >= 500 ? p.failure.status : 502, p.failure.code ?? 'upstream_error', p.failure.message);
        return;
      case 'end':
        this.done = true;
        return;
    }
  }

  /** id/object/created/model of this stream, for a usage chunk we build ourselves. */
  template(): Record<string, unknown> {
    try {
      const c = JSON.parse(this.firstChunk ?? '{}') as Record<string, unknown>;
      return { id: c.id, object: c.object ?? 'chat.completion.chunk', created: c.created, model: c.model };
    } catch {
      return { object: 'chat.completion.chunk' };
    }
  }

  fail(status: number, code: string, message: string): void {
    if (this.done) return;
    this.done = true;
    this.failed = true;
    const err = { error: { message, type: 'api_error', param: null, code } };
    this.ctx.record.outcome = { status, errorType: 'api_error', errorMessage: message };
    this.ctx.record.responseBody = this.text;
    if (!this.res.destroyed) this.res.end(`data: ${JSON.stringify(err)}\n\n`);
  }

  async write(s: string): Promise<void> {
    if (this.res.destroyed) throw new ClientGone();
    if (this.res.write(s)) return;
    const signal = this.ctx.abort.signal;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.res.once('drain', done);
      signal.addEventListener('abort', done, { once: true });
    });
    if (signal.aborted) throw new ClientGone();
  }
}
