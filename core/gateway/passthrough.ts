/**
 * The endpoints whose bodies go to the provider as the client sent them (legacy completions, images,
 * audio): only OpenAI-protocol adapters serve them (`passthroughRequest`). One attempt loop with the
 * failover of chat, and one way to answer: JSON gets `usage.cost` when priced, anything else (the
 * `text`/`srt`/`vtt` transcripts) goes back with the provider's Content-Type, and an event stream is
 * relayed as it arrives.
 */
import { GatewayError, internalError } from '../errors.ts';
import { formatUsd, stringifyWithCost } from '../pricing/cost.ts';
import type { CallContext, PassthroughBody, PassthroughPath, UpstreamRequest } from '../providers/types.ts';
import { SseParser } from '../upstream/sse-parser.ts';
import { classifyTransportError } from '../upstream/transport.ts';
import type { UpstreamResponse } from '../upstream/transport.ts';
import { fromOpenAIUsage } from '../usage.ts';
import type { Usage } from '../usage.ts';
import type { Admission } from './admission.ts';
import { ClientGone, runAttempts } from './attempts.ts';
import type { AttemptOutcome, AttemptSuccess } from './attempts.ts';
import { settleUsage as settleCallUsage } from '../pipeline/settle-usage.ts';
import { successHeaders } from './success-headers.ts';
import type { Candidate } from './model-router.ts';
import type { RequestContext } from './request-context.ts';
import { clientGone } from './request-context.ts';
import { readJsonBody, sendToProvider, timeoutsFor, transportFailure } from './upstream-call.ts';

/**
 * The admitted candidates that can serve `path`. Those that cannot (demo, Anthropic, Gemini) are
 * skipped, so the call goes to the next one; when none can, a 400 names the providers.
 */
export function servingCandidates(admission: Admission, path: PassthroughPath, requested: string): Admission {
  const serving = admission.candidates.filter((c) => typeof c.runtime.adapter.passthroughRequest === 'function');
  if (serving.length > 0) return serving.length === admission.candidates.length ? admission : { ...admission, candidates: serving };
  const names = [...new Set(admission.candidates.map((c) => `${c.provider} (type ${c.runtime.settings.type})`))];
  throw new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_endpoint',
    param: 'model',
    message:
      `${names.length === 1 ? 'Provider' : 'Providers'} ${names.join(', ')} serving \`${requested}\` ${names.length === 1 ? 'does' : 'do'} not serve /v1${path}; ` +
      'only OpenAI-protocol providers (openai, openai-compatible, azure) do. Add one with `gateway providers add NAME --type openai ...`.',
  });
}

/** The provider request of a candidate admitted by `servingCandidates`. */
export function passthroughRequestFor(c: Candidate, path: PassthroughPath, body: PassthroughBody, callCtx: CallContext): UpstreamRequest {
  const build = c.runtime.adapter.passthroughRequest;
  if (!build) throw internalError(`provider ${c.provider} cannot serve ${path}`);
  return build(path, body, callCtx);
}

/** A JSON request body for the pass-through endpoints: the client's fields, `user` dropped, `model` for the wire. */
export function jsonBody(fields: Record<string, unknown>): PassthroughBody {
  return {
    contentType: 'application/json',
    build(wireModel) {
      const out: Record<string, unknown> = {};
      for (const k in fields) if (k !== 'user') out[k] = fields[k];
      out.model = wireModel;
      return JSON.stringify(out);
    },
  };
}

/** Usage that counts tokens (gpt-image, gpt-4o-transcribe); `{type:"duration"}` (whisper-1) is no token usage. */
export function tokenUsage(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const counted = ['prompt_tokens', 'completion_tokens', 'input_tokens', 'output_tokens'].some((k) => typeof u[k] === 'number');
  return counted ? fromOpenAIUsage(u) : null;
}

export type PassthroughValue =
  | { kind: 'json'; json: Record<string, unknown> }
  /** Any other body (text, srt, vtt), returned with the provider's Content-Type. */
  | { kind: 'raw'; contentType: string; bytes: Buffer }
  /** `stream: true` answered with an event stream: relayed once the attempt has succeeded. */
  | { kind: 'sse'; contentType: string; res: UpstreamResponse };

export interface PassthroughOptions {
  path: PassthroughPath;
  stream: boolean;
  /** A 200 that is not JSON is the provider's failure (completions, images); audio may answer in text. */
  jsonOnly: boolean;
  body(callCtx: CallContext): PassthroughBody;
}

const header = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));
const malformed = (message: string): AttemptOutcome<never> => ({
  ok: false,
  failure: { kind: 'http', failure: { status: 502, message, type: 'api_error', code: 'malformed_response' } },
});

/** Runs the call over the candidates with failover; the whole body is read inside the attempt (except streams). */
export async function runPassthrough(ctx: RequestContext, admission: Admission, opts: PassthroughOptions): Promise<AttemptSuccess<PassthroughValue>> {
  const { deps, record } = ctx;
  const timeouts = timeoutsFor(deps, opts.stream);
  const success = await runAttempts<PassthroughValue>(
    deps,
    admission.candidates,
    admission.strategy,
    async (c, apiKey): Promise<AttemptOutcome<PassthroughValue>> => {
      const callCtx: CallContext = { provider: c.runtime.settings, model: c.model, apiKey, stream: opts.stream };
      const sent = await sendToProvider(deps, c.runtime.adapter, passthroughRequestFor(c, opts.path, opts.body(callCtx), callCtx), timeouts, ctx.abort.signal, ctx.onQueued);
      if (!sent.ok) return sent;
      const contentType = header(sent.res.headers['content-type']);
      if (opts.stream && /^text\/event-stream/i.test(contentType)) return { ok: true, value: { kind: 'sse', contentType, res: sent.res } };
      if (opts.jsonOnly || /json/i.test(contentType)) {
        const read = await readJsonBody(sent.res);
        if (!read.ok) return read;
        if (read.json === null || typeof read.json !== 'object' || Array.isArray(read.json)) return malformed('The provider answered with JSON that is not an object.');
        return { ok: true, value: { kind: 'json', json: read.json as Record<string, unknown> } };
      }
      try {
        return { ok: true, value: { kind: 'raw', contentType: contentType || 'application/octet-stream', bytes: await sent.res.body.bytes() } };
      } catch (err) {
        return transportFailure(err);
      }
    },
    () => clientGone(ctx),
  );
  record.servedBy(success);
  return success;
}

/** Prices the usage (null: `unpriced`) and sends the answer; returns the cost. */
export function respondPassthrough(ctx: RequestContext, success: AttemptSuccess<PassthroughValue>, usage: Usage | null): number | null {
  const { record } = ctx;
  const { candidate, value } = success;
  settleUsage(ctx, candidate, usage);
  const headers = successHeaders(ctx, candidate.provider, candidate.model, success.attempts.length, record.priced.pricing);
  const cost = record.priced.costUsd;
  if (cost !== null) headers['x-gateway-cost-usd'] = formatUsd(cost);
  let bytes: Buffer;
  let contentType: string;
  if (value.kind === 'json') {
    const u = value.json.usage;
    const text = stringifyWithCost(value.json, u !== null && typeof u === 'object' && !Array.isArray(u) ? (u as Record<string, unknown>) : null, cost);
    record.responseBody = text;
    bytes = Buffer.from(text);
    contentType = 'application/json';
  } else if (value.kind === 'raw') {
    bytes = value.bytes;
    contentType = value.contentType;
    record.responseBody = /^text\//i.test(contentType) ? bytes.toString('utf8') : `<${bytes.length} bytes of ${contentType}>`;
  } else {
    throw internalError('a stream answer cannot be sent whole');
  }
  ctx.res.writeHead(200, { ...headers, 'content-type': contentType, 'content-length': bytes.length });
  ctx.res.end(bytes);
  return cost;
}

function settleUsage(ctx: RequestContext, candidate: Candidate, usage: Usage | null): void {
  if (usage) settleCallUsage(ctx, candidate, usage);
  else {
    ctx.record.usage = null;
    ctx.record.priced = { costUsd: null, pricing: 'unpriced' };
  }
}

/**
 * Relays an event stream (gpt-image partial images, gpt-4o-transcribe deltas) as it arrives. Usage is
 * read from whichever event carries it (`*.completed`, `transcript.text.done`) for the audit row; the
 * events themselves pass through untouched. An upstream failure mid-stream ends it with an error event.
 */
export async function relayPassthroughStream(ctx: RequestContext, success: AttemptSuccess<PassthroughValue>, estimate?: (text: string) => Usage): Promise<number | null> {
  const { record } = ctx;
  const { candidate, value } = success;
  if (value.kind !== 'sse') throw internalError('not a stream answer');
  const res = ctx.res;
  res.writeHead(200, {
    ...successHeaders(ctx, candidate.provider, candidate.model, success.attempts.length, null),
    'content-type': value.contentType,
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  const parser = new SseParser();
  let usage: Usage | null = null;
  let text = '';
  const watch = (events: ReturnType<SseParser['push']>) => {
    for (const ev of events) {
      if (ev.data === '[DONE]') continue;
      try {
        const j = JSON.parse(ev.data) as { usage?: unknown; delta?: unknown };
        usage = tokenUsage(j.usage) ?? usage;
        if (typeof j.delta === 'string' && text.length < 65_536) text += j.delta;
      } catch {
        /* not JSON: passed on as is */
      }
    }
  };
  try {
    for await (const chunk of value.res.body as AsyncIterable<Buffer>) {
      if (record.ttftMs === null) record.ttftMs = record.elapsedMs();
      watch(parser.push(chunk));
      await write(ctx, chunk);
    }
    watch(parser.end());
  } catch (err) {
    if (err instanceof ClientGone || clientGone(ctx)) {
      settleUsage(ctx, candidate, usage ?? estimate?.(text) ?? null);
      throw new ClientGone();
    }
    const te = classifyTransportError(err);
    const timeout = te.kind === 'timeout';
    const message = `The provider ${candidate.provider} ${timeout ? 'went silent' : 'dropped the connection'} mid-stream (${te.message}).`;
    const status = timeout ? 504 : 502;
    record.outcome = { status, errorType: 'api_error', errorMessage: message };
    // What was already produced is billed: the usage seen so far, else an estimate from the text relayed.
    settleUsage(ctx, candidate, usage ?? estimate?.(text) ?? null);
    record.responseBody = text;
    if (!res.destroyed) res.end(`data: ${JSON.stringify({ error: { message, type: 'api_error', param: null, code: timeout ? 'upstream_timeout' : 'upstream_error' } })}\n\n`);
    return record.priced.costUsd;
  } finally {
    if (!value.res.body.destroyed) value.res.body.destroy();
  }
  settleUsage(ctx, candidate, usage ?? estimate?.(text) ?? null);
  record.responseBody = text;
  res.end();
  return record.priced.costUsd;
}

async function write(ctx: RequestContext, chunk: Buffer): Promise<void> {
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
