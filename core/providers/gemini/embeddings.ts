/** OpenAI embeddings ↔ Gemini `batchEmbedContents`. */
import { GatewayError } from '../../errors.ts';
import type { Usage } from '../../usage.ts';
import type { CallContext, EmbeddingsResult, UpstreamRequest } from '../types.ts';
import { UnsupportedInputError } from './errors.ts';
import { bareModel, geminiHeaders, geminiUrl, modelResource } from './request.ts';
import type { BatchEmbedContentsRequest, BatchEmbedContentsResponse } from './wire.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Gemini refuses larger batches ("at most 100 requests can be in one batch"). */
export const MAX_BATCH = 100;

/**
 * Word counts of the inputs, kept per call so the response can estimate usage when Gemini reports
 * none: `embeddingsResponse` gets only the upstream JSON and the call context, not the request body.
 */
const wordsByCall = new WeakMap<CallContext, number>();

const countWords = (s: string): number => s.split(/\s+/).filter((w) => w !== '').length;

function inputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((s) => typeof s === 'string')) {
    if (input.length === 0) throw new UnsupportedInputError('`input` must not be empty.', 'input');
    return input;
  }
  if (Array.isArray(input) && input.every((s) => typeof s === 'number' || Array.isArray(s))) {
    throw new UnsupportedInputError('Gemini embeds text only; token-array inputs are not supported. Send strings.', 'input');
  }
  throw new UnsupportedInputError('`input` must be a string or an array of strings.', 'input');
}

export function embeddingsRequest(body: Record<string, unknown>, ctx: CallContext): UpstreamRequest {
  const texts = inputs(body.input);
  if (texts.length > MAX_BATCH) {
    throw new UnsupportedInputError(`Gemini embeds at most ${MAX_BATCH} inputs per request; got ${texts.length}. Split the batch.`, 'input');
  }
  const model = modelResource(ctx.model);
  const dims = typeof body.dimensions === 'number' && Number.isInteger(body.dimensions) && body.dimensions > 0 ? body.dimensions : undefined;
  const wire: BatchEmbedContentsRequest = {
    requests: texts.map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(dims !== undefined ? { outputDimensionality: dims } : {}),
    })),
  };
  wordsByCall.set(ctx, texts.reduce((n, t) => n + countWords(t), 0));
  return {
    method: 'POST',
    url: geminiUrl(ctx.provider.baseUrl, `${model}:batchEmbedContents`),
    headers: geminiHeaders(ctx.apiKey, true),
    body: JSON.stringify(wire),
  };
}

/**
 * Float vectors in request order (the caller encodes base64 when asked). Usage is Gemini's
 * `usageMetadata.promptTokenCount` when present, else a word-count estimate marked `estimated`, else
 * (the request was mapped with another context object) null so the caller estimates.
 */
export function embeddingsResponse(raw: unknown, ctx: CallContext): EmbeddingsResult {
  const json = (isObj(raw) ? raw : {}) as BatchEmbedContentsResponse;
  if (!Array.isArray(json.embeddings) || json.embeddings.length === 0) {
    throw new GatewayError({ status: 502, type: 'api_error', code: 'upstream_error', message: 'Gemini returned no embeddings.' });
  }
  const data = json.embeddings.map((e, index) => ({
    object: 'embedding',
    index,
    embedding: isObj(e) && Array.isArray(e.values) ? e.values : [],
  }));

  const reported = isObj(json.usageMetadata) ? json.usageMetadata.promptTokenCount : undefined;
  const words = wordsByCall.get(ctx);
  let usage: Usage | null = null;
  if (typeof reported === 'number' && Number.isFinite(reported)) usage = tokens(reported, false);
  else if (words !== undefined) usage = tokens(words, true);
  const promptTokens = usage?.inputTokens ?? 0;
  return {
    body: {
      object: 'list',
      data,
      model: bareModel(ctx.model),
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
    usage,
  };
}

const tokens = (inputTokens: number, estimated: boolean): Usage => ({
  inputTokens,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  estimated,
});
