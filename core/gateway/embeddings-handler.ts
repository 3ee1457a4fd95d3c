/**
 * `POST /v1/embeddings`. The client's `encoding_format` is honoured whatever the upstream does:
 * the official Node SDK asks for base64 by default and decodes it unconditionally, so a float array
 * coming back from an upstream that ignores the field is packed as little-endian float32 here.
 */
import { isPromise } from '../state/awaitable.ts';
import { badRequest } from '../errors.ts';
import type { EmbeddingsResult } from '../providers/types.ts';
import { formatUsd, stringifyWithCost } from '../pricing/cost.ts';
import { admit } from './admission.ts';
import { runAttempts } from './attempts.ts';
import type { AttemptOutcome } from './attempts.ts';
import { priceUsage } from './call-record.ts';
import { successHeaders } from './success-headers.ts';
import { admissionCountsPrompt, countTokensExact, promptTokenCounter } from './estimate.ts';
import type { RequestContext } from './request-context.ts';
import { clientGone } from './request-context.ts';
import { parseRequest } from './schemas/common.ts';
import { embeddingsRequestSchema } from './schemas/embeddings.ts';
import { readJsonBody, sendToProvider, timeoutsFor } from './upstream-call.ts';

function validate(body: Record<string, unknown>): { model: string; texts: string[]; format: 'float' | 'base64' } {
  if (typeof body.model !== 'string' || body.model === '') throw badRequest('You must provide a model parameter.', 'missing_parameter', 'model');
  if (body.input === '') throw badRequest("'input' cannot be an empty string.", 'invalid_value', 'input');
  const parsed = parseRequest(embeddingsRequestSchema, body);
  const input = parsed.input;
  const texts = typeof input === 'string' ? [input] : (input as unknown[]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  return { model: parsed.model, texts, format: parsed.encoding_format ?? 'float' };
}

const toBase64 = (v: number[]): string => Buffer.from(new Float32Array(v).buffer).toString('base64');
const fromBase64 = (s: string): number[] => {
  const b = Buffer.from(s, 'base64');
  return Array.from(new Float32Array(b.buffer, b.byteOffset, Math.floor(b.length / 4)));
};

export async function handleEmbeddings(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const { deps, record } = ctx;
  const { model, texts, format } = validate(raw);
  record.modelRequested = model;
  let admission = admit(ctx, model, { inputTokens: await promptTokenCounter(texts, admissionCountsPrompt(ctx.key)), maxOutputTokens: 0 });
  if (isPromise(admission)) admission = await admission;
  try {
    const timeouts = timeoutsFor(deps, false);
    const success = await runAttempts<EmbeddingsResult>(
      deps,
      admission.candidates,
      admission.strategy,
      async (c, apiKey): Promise<AttemptOutcome<EmbeddingsResult>> => {
        const adapter = c.runtime.adapter;
        if (!adapter.embeddingsRequest || !adapter.embeddingsResponse) {
          return { ok: false, failure: { kind: 'http', failure: { status: 404, message: `provider ${c.provider} does not serve embeddings`, type: 'invalid_request_error', code: 'model_not_found' } } };
        }
        const callCtx = { provider: c.runtime.settings, model: c.model, apiKey, stream: false };
        // An input the adapter cannot express (Gemini: token arrays, > 100 inputs) throws a GatewayError that
        // goes back as is, code and param included, as chat does; anything else thrown is a bug of ours (500).
        const upstreamReq = adapter.embeddingsRequest(raw, callCtx);
        const sent = await sendToProvider(deps, adapter, upstreamReq, timeouts, ctx.abort.signal, ctx.onQueued);
        if (!sent.ok) return sent;
        const read = await readJsonBody(sent.res);
        if (!read.ok) return read;
        return { ok: true, value: adapter.embeddingsResponse(read.json, callCtx) };
      },
      () => clientGone(ctx),
    );
    const { candidate, value } = success;
    record.servedBy(success);

    const data = Array.isArray(value.body.data) ? (value.body.data as Array<Record<string, unknown>>) : [];
    for (const item of data) {
      const e = item.embedding;
      if (format === 'base64' && Array.isArray(e)) item.embedding = toBase64(e as number[]);
      else if (format === 'float' && typeof e === 'string') item.embedding = fromBase64(e);
    }
    const usage = value.usage ?? { inputTokens: await countTokensExact(texts), outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: true };
    if (!value.usage) value.body.usage = { prompt_tokens: usage.inputTokens, total_tokens: usage.inputTokens };
    record.usage = usage;
    record.priced = priceUsage(deps, candidate.runtime.settings, candidate.model, usage);
    const headers = successHeaders(ctx, candidate.provider, candidate.model, success.attempts.length, record.priced.pricing);
    if (record.priced.costUsd !== null) headers['x-gateway-cost-usd'] = formatUsd(record.priced.costUsd);
    if (ctx.key.tpm) deps.limiter.recordTokens(ctx.key.id, usage.inputTokens);
    const u = value.body.usage !== null && typeof value.body.usage === 'object' ? (value.body.usage as Record<string, unknown>) : null;
    const text = stringifyWithCost(value.body, u, record.priced.costUsd);
    record.responseBody = `{"object":"list","data":[${data.length} embeddings],"usage":${stringifyWithCost(value.body.usage, u, record.priced.costUsd)}}`;
    ctx.res.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    ctx.res.end(text);
  } finally {
    // Whatever the outcome (even a client gone mid-stream), the key pays what the record says was used.
    admission.settle(ctx.record.priced.costUsd);
  }
}
