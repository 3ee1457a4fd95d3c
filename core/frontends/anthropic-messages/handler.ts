/**
 * `POST /v1/messages` on the call pipeline, and `POST /v1/messages/count_tokens`: proxied to an
 * Anthropic provider that serves the model, else counted locally; never billed, never an inference call.
 */
import { isPromise } from '../../state/awaitable.ts';
import { forbidden, modelNotFound } from '../../errors.ts';
import { admissionCountsPrompt, countTokensExact, promptTokenCounter } from '../../gateway/estimate.ts';
import type { Priced } from '../../gateway/call-record.ts';
import { resolveModel } from '../../gateway/model-router.ts';
import type { RequestContext } from '../../gateway/request-context.ts';
import { sendToProvider, timeoutsFor } from '../../gateway/upstream-call.ts';
import { anthropicPassthroughRequest } from '../../providers/anthropic/passthrough.ts';
import { runCall } from '../../pipeline/run-call.ts';
import type { Usage } from '../../usage.ts';
import { anthropicCodecFor } from './codec.ts';
import { anthropicMessagesFrontEnd } from './front-end.ts';
import { check, parseMessagesRequest } from './parse.ts';
import { callPromptText as promptText } from '../../pipeline/prompt-text.ts';
import { countTokensSchema } from './schema.ts';

export async function handleMessages(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const request = anthropicMessagesFrontEnd.parse(raw, ctx.req.headers);
  const counted = promptTokenCounter(() => promptText(request), admissionCountsPrompt(ctx.key));
  const promptTokens = isPromise(counted) ? await counted : counted;
  await runCall(ctx, {
    frontEnd: anthropicMessagesFrontEnd,
    request,
    codecFor: anthropicCodecFor(request, ctx.bodyText),
    promptTokens,
    estimate: async (text): Promise<Usage> => {
      const [inputTokens, outputTokens] = await Promise.all([promptTokens.exact(), countTokensExact(text)]);
      return { inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: true };
    },
  });
}

/** Counting tokens costs nothing, at any provider: a known price of zero, not an unknown one. */
const FREE: Priced = { costUsd: 0, pricing: 'priced' };

export async function handleCountTokens(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const body = check(countTokensSchema, raw);
  const { deps, key, record } = ctx;
  record.modelRequested = body.model;
  const resolution = resolveModel(body.model, deps.live);
  if (!resolution) throw modelNotFound(body.model);
  let candidates = resolution.candidates;
  if (key.models && key.models.length > 0 && !key.models.includes(body.model)) {
    const allowed = new Set(key.models);
    candidates = candidates.filter((c) => allowed.has(c.model));
    if (candidates.length === 0) throw forbidden(`Key "${key.name}" may not use model \`${body.model}\`.`, 'model_not_allowed');
  }
  const headers = { ...ctx.baseHeaders, 'x-request-id': ctx.requestId, 'request-id': ctx.requestId };
  const anthropic = candidates.find((c) => c.runtime.adapter.protocol === 'anthropic-messages');
  if (anthropic) {
    const apiKey = await deps.providerKeys.keyOrNull(anthropic.runtime.settings);
    const request = parseMessagesRequest({ ...body, max_tokens: 1 }, ctx.req.headers);
    const callCtx = { provider: anthropic.runtime.settings, model: anthropic.model, apiKey, stream: false };
    const sent = await sendToProvider(deps, anthropic.runtime.adapter, anthropicPassthroughRequest(body, request.forwardHeaders, callCtx, '/v1/messages/count_tokens'), timeoutsFor(deps, false), ctx.abort.signal, ctx.onQueued);
    record.provider = anthropic.provider;
    record.model = anthropic.model;
    record.secrets.push(apiKey);
    if (sent.ok) {
      const text = await sent.res.body.text();
      record.responseBody = text;
      record.priced = FREE;
      ctx.res.writeHead(sent.res.status, { ...headers, 'x-gateway-provider': anthropic.provider, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      ctx.res.end(text);
      return;
    }
    // The provider could not count: a local estimate beats an error for a request that costs nothing.
  }
  const request = parseMessagesRequest({ ...body, max_tokens: 1 }, ctx.req.headers);
  const text = JSON.stringify({ input_tokens: (await countTokensExact(promptText(request))) + 3 * request.messages.length });
  record.responseBody = text;
  record.priced = FREE;
  ctx.res.writeHead(200, { ...headers, 'x-gateway-estimated': 'true', 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  ctx.res.end(text);
}
