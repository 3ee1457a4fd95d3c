/** The OpenAI adapter: also the base of every OpenAI-compatible preset, the demo provider and Azure. */
import { fromOpenAIUsage } from '../../usage.ts';
import { retryAfterMs } from '../../routing/failure-policy.ts';
import { joinUrl } from '../base-url.ts';
import type { ProviderAdapter, ProviderType } from '../types.ts';
import { parseOpenAIError } from './errors.ts';
import { openAIChatRequest, openAIHeaders, openAIPassthroughRequest } from './request.ts';
import { OpenAIStreamTranslator } from './stream.ts';
import { openAINeutralCodec } from './neutral.ts';

export function makeOpenAIAdapter(type: ProviderType): ProviderAdapter {
  const adapter: ProviderAdapter = {
    type,
    protocol: 'openai-chat',
    neutral: openAINeutralCodec(),
    chatRequest: (body, ctx) => openAIChatRequest(body, ctx),
    chatResponse(json) {
      const body = json as Record<string, unknown>;
      return { body, usage: fromOpenAIUsage(body.usage) };
    },
    chatStream: () => new OpenAIStreamTranslator(),
    parseError(status, bodyText, headers) {
      const failure = parseOpenAIError(status, bodyText);
      const wait = retryAfterMs(headers);
      return wait === undefined ? failure : { ...failure, retryAfterMs: wait };
    },
    modelsRequest: (ctx) => ({ method: 'GET', url: joinUrl(ctx.provider.baseUrl, '/models'), headers: openAIHeaders(ctx.apiKey) }),
    parseModels(json) {
      const data = (json as { data?: unknown })?.data;
      if (!Array.isArray(data)) return [];
      return data.map((m) => (m as { id?: unknown })?.id).filter((id): id is string => typeof id === 'string');
    },
    embeddingsRequest(body, ctx) {
      const out: Record<string, unknown> = { ...body, model: ctx.model };
      delete out.user;
      return { method: 'POST', url: joinUrl(ctx.provider.baseUrl, '/embeddings'), headers: openAIHeaders(ctx.apiKey), body: JSON.stringify(out) };
    },
    embeddingsResponse(json) {
      const body = json as Record<string, unknown>;
      return { body, usage: fromOpenAIUsage(body.usage) };
    },
  };
  // The demo server answers chat and embeddings only: no pass-through, so those calls go to a provider that serves them.
  if (type !== 'demo') {
    adapter.passthroughRequest = (path, body, ctx) => openAIPassthroughRequest(joinUrl(ctx.provider.baseUrl, path), openAIHeaders(ctx.apiKey), body, ctx.model);
  }
  return adapter;
}

export const openAIAdapter = makeOpenAIAdapter('openai');
