/**
 * `POST /v1/images/generations`: a JSON pass-through to OpenAI-protocol providers. Admission reserves
 * `n` times the per-image price for the requested size and quality (for the token-priced GPT image
 * models, their published per-image worst case); the call settles from the token usage the provider
 * reports, else from the images it returned at the per-image price (`gateway prices set --per-image`).
 */
import { isPromise } from '../state/awaitable.ts';
import { badRequest } from '../errors.ts';
import { IMAGE_WORST_CASE_USD } from '../pricing/builtin-prices.ts';
import { imageWorstCaseUsd } from '../pricing/worst-case.ts';
import type { Usage } from '../usage.ts';
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
  const n = typeof raw.n === 'number' && Number.isInteger(raw.n) && raw.n > 0 ? raw.n : 1;
  const kind = `${typeof raw.size === 'string' ? raw.size : '*'}|${typeof raw.quality === 'string' ? raw.quality : '*'}`;
  let admission = admit(ctx, model, {
    inputTokens: countTokens(raw.prompt),
    maxOutputTokens: null,
    n,
    unitWorstCase: (price, m) => imageWorstCaseUsd(price, kind, n, IMAGE_WORST_CASE_USD[m] ?? null),
  });
  if (isPromise(admission)) admission = await admission;
  try {
    const serving = servingCandidates(admission, '/images/generations', model);
    const body = jsonBody(raw);
    const success = await runPassthrough(ctx, serving, { path: '/images/generations', stream, jsonOnly: !stream, body: () => body });
    if (success.value.kind === 'sse') {
      await relayPassthroughStream(ctx, success);
      return;
    }
    let usage: Usage | null = null;
    if (success.value.kind === 'json') {
      const json = success.value.json;
      usage = tokenUsage(json.usage);
      if (!usage) {
        const images = Array.isArray(json.data) ? json.data.length : n;
        usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: false, images, imageKind: kind };
      }
    }
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
