/**
 * The native Responses request for the providers that serve OpenAI's Responses API themselves (OpenAI,
 * Azure OpenAI): the client's body as sent, with only `model` rewritten (and `user` dropped: keys identify
 * end users). OpenAI: `{base}/responses`; Azure v1 API: `{endpoint}/openai/v1/responses` with the
 * deployment as `model`; Azure's classic API (an `apiVersion` option): `{endpoint}/openai/responses?api-version=`.
 */
import { joinUrl } from './base-url.ts';
import { deploymentFor, headers as azureHeaders } from './azure/index.ts';
import { openAIHeaders } from './openai/request.ts';
import type { CallContext, ProviderType, UpstreamRequest } from './types.ts';

/** Provider types whose upstream speaks the Responses API. */
export const servesResponsesNatively = (type: ProviderType): boolean => type === 'openai' || type === 'azure';

function azureResponsesUrl(ctx: CallContext): string {
  const root = ctx.provider.baseUrl.replace(/\/+$/, '').replace(/\/openai(\/v1)?$/, '');
  const version = ctx.provider.options.apiVersion;
  if (typeof version === 'string') return joinUrl(root, `/openai/responses?api-version=${encodeURIComponent(version)}`);
  return joinUrl(root, '/openai/v1/responses');
}

/**
 * Reasoning items whose `encrypted_content` the gateway made (`gw1:`, another provider's signature carried
 * through the client) mean nothing to OpenAI, which refuses content it cannot decrypt: they stay behind.
 */
const gatewayReasoning = (item: unknown): boolean =>
  item !== null &&
  typeof item === 'object' &&
  (item as Record<string, unknown>).type === 'reasoning' &&
  String((item as Record<string, unknown>).encrypted_content ?? '').startsWith('gw1:');

export function nativeResponsesRequest(body: Record<string, unknown>, ctx: CallContext): UpstreamRequest {
  const out: Record<string, unknown> = {};
  for (const k in body) if (k !== 'user') out[k] = body[k];
  if (Array.isArray(body.input) && body.input.some(gatewayReasoning)) out.input = body.input.filter((i) => !gatewayReasoning(i));
  const azure = ctx.provider.type === 'azure';
  out.model = azure ? deploymentFor(ctx.provider, ctx.model) : ctx.model;
  if (ctx.stream) out.stream = true;
  const h = azure ? azureHeaders(ctx.apiKey) : openAIHeaders(ctx.apiKey);
  if (ctx.stream) h.accept = 'text/event-stream';
  return { method: 'POST', url: azure ? azureResponsesUrl(ctx) : joinUrl(ctx.provider.baseUrl, '/responses'), headers: h, body: JSON.stringify(out) };
}
