/**
 * `POST /v1/images/generations`: a JSON pass-through to OpenAI-protocol providers. Images are priced
 * per image, which the price data does not cover: a call is `unpriced` unless the provider reports
 * token usage (the GPT image models do) and the model has a token price.
 */
import { badRequest } from '../errors.ts';
import { admit } from './admission.ts';
import { countTokens } from './estimate.ts';
import { jsonBody, relayPassthroughStream, respondPassthrough, runPassthrough, servingCandidates, tokenUsage } from './passthrough.ts';
import type { RequestContext } from './request-context.ts';
import { parseRequest } from './schemas/common.ts';
import { imagesRequestSchema } from './schemas/images.ts';

/** The API's default when `model` is left out (spec `CreateImageRequest`). */
export const DEFAULT_IMAGE_MODEL = 'dall-e-2';

export async function handleImages(ctx: RequestContext, input: Record<string, unknown>): Promise<void> {
  if (input.prompt === undefined || input.prompt === null || input.prompt === '') throw badRequest("Missing required parameter: 'prompt'.", 'missing_parameter', 'prompt');
  const raw = parseRequest(imagesRequestSchema, input);
  const model = typeof raw.model === 'string' ? raw.model : DEFAULT_IMAGE_MODEL;
  const stream = raw.stream === true;
  ctx.record.modelRequested = model;
  const admission = admit(ctx, model, { inputTokens: countTokens(raw.prompt), maxOutputTokens: null });
  try {
    const serving = servingCandidates(admission, '/images/generations', model);
    const body = jsonBody(raw);
    const success = await runPassthrough(ctx, serving, { path: '/images/generations', stream, jsonOnly: !stream, body: () => body });
    if (success.value.kind === 'sse') {
      await relayPassthroughStream(ctx, success);
      return;
    }
    const usage = success.value.kind === 'json' ? tokenUsage(success.value.json.usage) : null;
    respondPassthrough(ctx, success, usage);
    // The audit row keeps the shape, not megabytes of base64.
    if (success.value.kind === 'json') ctx.record.responseBody = summarizeImages(success.value.json);
  } finally {
    // Whatever the outcome (even a client gone mid-stream), the key pays what the record says was used.
    admission.settle(ctx.record.priced.costUsd);
  }
}

function summarizeImages(json: Record<string, unknown>): string {
  const data = Array.isArray(json.data) ? (json.data as unknown[]) : [];
  const items = data.map((d) => {
    const item = { ...(d as Record<string, unknown>) };
    if (typeof item.b64_json === 'string') item.b64_json = `<${item.b64_json.length} base64 chars>`;
    return item;
  });
  return JSON.stringify({ ...json, data: items });
}
