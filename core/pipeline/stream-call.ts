/**
 * A streamed call. Headers are held until the first good frame, so until then a failing provider can
 * still be replaced. After that, frames are rendered by the front end (or relayed natively) as they
 * arrive, with backpressure and keep-alives during silences; an error after the first byte ends the
 * stream in the protocol's own way, and a stream cut short is still billed for what it used.
 */
import { GatewayError } from '../errors.ts';
import type { Frame, FrameDecoder } from '../providers/types.ts';
import { rejectsStreamOptions } from '../providers/openai/request.ts';
import { SseParser } from '../upstream/sse-parser.ts';
import { classifyTransportError } from '../upstream/transport.ts';
import type { UpstreamResponse } from '../upstream/transport.ts';
import type { Admission } from '../gateway/admission.ts';
import { ClientGone, runAttempts } from '../gateway/attempts.ts';
import type { AttemptOutcome } from '../gateway/attempts.ts';
import type { Candidate } from '../gateway/model-router.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import { clientGone } from '../gateway/request-context.ts';
import { successHeaders } from '../gateway/success-headers.ts';
import { sendToProvider, timeoutsFor, transportFailure } from '../gateway/upstream-call.ts';
import { reportsCounts } from '../usage.ts';
import type { Usage } from '../usage.ts';
import type { UpstreamCodec } from './codec.ts';
import { Relay } from './relay.ts';
import type { PipelineCall } from './pipeline-call.ts';
import { settleUsage } from './settle-usage.ts';

interface OpenStream {
  res: UpstreamResponse;
  it: AsyncIterator<Buffer>;
  parser: SseParser;
  decoder: FrameDecoder;
  /** Frames already read while waiting for the first good one. */
  pending: Frame[];
}

const STREAM_OPTIONS_REFUSED = /stream_options|include_usage/i;

export async function streamCall(ctx: RequestContext, call: PipelineCall, admission: Admission, codecFor: (c: Candidate) => UpstreamCodec): Promise<void> {
  const { deps, record } = ctx;
  const timeouts = timeoutsFor(deps, true);

  const open = async (c: Candidate, apiKey: string | null, retried: boolean): Promise<AttemptOutcome<OpenStream>> => {
    const callCtx = { provider: c.runtime.settings, model: c.model, apiKey, stream: true };
    const codec = codecFor(c);
    const sent = await sendToProvider(deps, c.runtime.adapter, codec.request(callCtx), timeouts, ctx.abort.signal, ctx.onQueued);
    if (!sent.ok) {
      const f = sent.failure;
      // An upstream that refuses stream_options is retried once without it, and remembered.
      if (
        !retried &&
        c.runtime.adapter.protocol === 'openai-chat' &&
        f.kind === 'http' &&
        (f.failure.status === 400 || f.failure.status === 422) &&
        STREAM_OPTIONS_REFUSED.test(f.failure.message) &&
        !rejectsStreamOptions(callCtx)
      ) {
        deps.live.learn(c.provider, { streamOptions: false });
        return open({ ...c, runtime: deps.live.providersByName.get(c.provider) ?? c.runtime }, apiKey, true);
      }
      return sent;
    }
    return firstFrame(sent.res, codec.frames(callCtx));
  };

  const success = await runAttempts<OpenStream>(deps, admission.candidates, admission.strategy, (c, k) => open(c, k, false), () => clientGone(ctx));
  const { candidate } = success;
  record.servedBy(success);

  const res = ctx.res;
  res.writeHead(200, {
    ...successHeaders(ctx, candidate.provider, candidate.model, success.attempts.length, null),
    ...call.frontEnd.headers?.(ctx.requestId),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });

  const renderer = call.frontEnd.stream(call.request, { requestId: ctx.requestId, requestedModel: call.request.model, model: candidate.model, provider: candidate.provider });
  const relay = new Relay(ctx, res, renderer);
  const stream = success.value;
  // A stream cut short (client gone, provider failed mid-way) still used tokens: bill what was delivered, from
  // the upstream's usage so far with at least the output relayed (Anthropic's `message_start` reports 1 output
  // token, which a cut pass-through stream was billed as, however much text it had relayed), else an estimate.
  const settlePartial = async (): Promise<void> => {
    settleUsage(ctx, candidate, partialUsage(relay.usage ?? stream.decoder.usageSoFar?.() ?? null, await call.estimate(relay.text)));
    record.responseBody = relay.text;
  };
  let frames = stream.pending;
  try {
    for (;;) {
      await relay.handleAll(frames);
      if (relay.done) break;
      let r: IteratorResult<Buffer>;
      try {
        r = await stream.it.next();
      } catch (err) {
        if (clientGone(ctx)) throw new ClientGone();
        const te = classifyTransportError(err);
        relay.fail(midStreamError(te.kind === 'timeout', `The provider ${candidate.provider} ${te.kind === 'timeout' ? 'went silent' : 'dropped the connection'} mid-stream (${te.message}).`));
        break;
      }
      if (r.done) {
        frames = [];
        for (const ev of stream.parser.end()) frames.push(...stream.decoder.push(ev));
        frames.push(...stream.decoder.finish());
        await relay.handleAll(frames);
        if (!relay.done) relay.fail(midStreamError(false, `The provider ${candidate.provider} closed the stream early.`));
        break;
      }
      frames = [];
      for (const ev of stream.parser.push(r.value)) frames.push(...stream.decoder.push(ev));
    }
  } catch (err) {
    relay.stop();
    if (err instanceof ClientGone) await settlePartial();
    throw err;
  } finally {
    relay.stop();
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
    if (relay.failed) return;
    throw new ClientGone();
  }

  // Completed: settle usage and cost, then the protocol's closing text.
  let usage = relay.usage && reportsCounts(relay.usage) ? relay.usage : await call.estimate(relay.text);
  const tier = relay.upstreamUsage?.service_tier;
  if (typeof tier === 'string') usage = { ...usage, serviceTier: tier };
  const settled = settleUsage(ctx, candidate, usage);
  // Clamped counts (impossible ones the upstream sent) are the gateway's: the client sees those, not the upstream's.
  const closing = renderer.end({ usage: settled, costUsd: record.priced.costUsd, estimated: settled.estimated || settled.clamped === true, ...(relay.upstreamUsage ? { upstreamUsage: relay.upstreamUsage } : {}), ...(relay.upstreamUsageText === null ? {} : { upstreamUsageText: relay.upstreamUsageText }) });
  relay.endWith(closing);
  record.responseBody = relay.text;
}

/**
 * A cut stream's usage: what the upstream already reported (Anthropic's `message_start` knows the whole
 * prompt, cache included) with the output that was relayed, whichever count is larger; estimated, since a
 * stream that never ended never gave its final count.
 */
function partialUsage(reported: Usage | null, estimated: Usage): Usage {
  if (reported === null) return estimated;
  return { ...reported, outputTokens: Math.max(reported.outputTokens, estimated.outputTokens), estimated: true };
}

function midStreamError(timeout: boolean, message: string): GatewayError {
  return new GatewayError({ status: timeout ? 504 : 502, type: 'api_error', code: timeout ? 'upstream_timeout' : 'upstream_error', message });
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

const isGood = (f: Frame): boolean =>
  f.kind === 'raw' ? f.good : f.kind === 'event' ? f.event.type !== 'ping' && f.event.type !== 'usage' : f.kind === 'end';

/** Reads until the first good frame; anything before it (errors, an early close) is a failed attempt. */
async function firstFrame(res: UpstreamResponse, decoder: FrameDecoder): Promise<AttemptOutcome<OpenStream>> {
  const it = res.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const parser = new SseParser();
  const pending: Frame[] = [];
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
    const frames: Frame[] = [];
    if (r.done) {
      for (const ev of parser.end()) frames.push(...decoder.push(ev));
      frames.push(...decoder.finish());
    } else {
      for (const ev of parser.push(r.value)) frames.push(...decoder.push(ev));
    }
    let good = false;
    for (const f of frames) {
      if (!good && f.kind === 'error') return fail(f.failure.status >= 400 ? f.failure.status : 502, f.failure.message);
      if (!good && f.kind === 'end') return fail(502, 'the stream ended before any content');
      // Everything read with the first good frame is kept: later frames of this read (even the end) belong to the relay.
      pending.push(f);
      if (isGood(f)) good = true;
    }
    if (good) return { ok: true, value: { res, it, parser, decoder, pending } };
    if (r.done) return fail(502, 'the stream ended before any content');
  }
}
