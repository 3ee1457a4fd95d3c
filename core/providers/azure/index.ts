/**
 * Azure OpenAI. Two shapes: the v1 API (`{endpoint}/openai/v1/...`, model = deployment name, `api-key`
 * header), used by default, and the classic deployments API
 * (`{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...`) when the provider's
 * options carry an `apiVersion`. `options.deployments` maps model ids to deployment names.
 */
import { joinUrl } from '../base-url.ts';
import { makeOpenAIAdapter } from '../openai/index.ts';
import { openAIChatBody, openAIPassthroughRequest } from '../openai/request.ts';
import { openAINeutralCodec } from '../openai/neutral.ts';
import type { CallContext, ProviderAdapter, ProviderSettings, UpstreamRequest } from '../types.ts';

function endpointRoot(baseUrl: string): string {
  // Accept `https://x.openai.azure.com`, `.../openai` or `.../openai/v1`.
  return baseUrl.replace(/\/+$/, '').replace(/\/openai(\/v1)?$/, '');
}

export function deploymentFor(provider: ProviderSettings, model: string): string {
  const map = provider.options.deployments;
  if (map && typeof map === 'object' && typeof (map as Record<string, unknown>)[model] === 'string') {
    return (map as Record<string, string>)[model];
  }
  return model;
}

const apiVersion = (p: ProviderSettings): string | null => (typeof p.options.apiVersion === 'string' ? p.options.apiVersion : null);

export function headers(apiKey: string | null): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey) h['api-key'] = apiKey;
  return h;
}

type AzureOp = 'chat/completions' | 'embeddings' | 'models' | 'completions' | 'images/generations' | 'audio/transcriptions' | 'audio/translations';

function azureUrl(ctx: Pick<CallContext, 'provider'>, op: AzureOp, model: string): string {
  const root = endpointRoot(ctx.provider.baseUrl);
  const version = apiVersion(ctx.provider);
  if (version === null) return joinUrl(root, `/openai/v1/${op}`);
  if (op === 'models') return joinUrl(root, `/openai/models?api-version=${encodeURIComponent(version)}`);
  const dep = encodeURIComponent(deploymentFor(ctx.provider, model));
  return joinUrl(root, `/openai/deployments/${dep}/${op}?api-version=${encodeURIComponent(version)}`);
}

function chatRequest(body: Parameters<ProviderAdapter['chatRequest']>[0], ctx: CallContext): UpstreamRequest {
  const out = openAIChatBody(body, ctx);
  // v1 API takes the deployment as `model`; the classic API names it in the path.
  out.model = deploymentFor(ctx.provider, ctx.model);
  return { method: 'POST', url: azureUrl(ctx, 'chat/completions', ctx.model), headers: headers(ctx.apiKey), body: JSON.stringify(out) };
}

/** Azure answers in OpenAI's shapes: responses, streams, errors and model lists parse the same way. */
const openAIShapes = makeOpenAIAdapter('azure');

export const azureAdapter: ProviderAdapter = {
  type: 'azure',
  protocol: 'openai-chat',
  neutral: openAINeutralCodec((body, ctx) => ({
    method: 'POST',
    url: azureUrl(ctx, 'chat/completions', ctx.model),
    headers: headers(ctx.apiKey),
    body: JSON.stringify({ ...body, model: deploymentFor(ctx.provider, ctx.model) }),
  })),
  chatRequest,
  chatResponse: openAIShapes.chatResponse,
  chatStream: openAIShapes.chatStream,
  parseError: openAIShapes.parseError,
  modelsRequest: (ctx) => ({ method: 'GET', url: azureUrl(ctx, 'models', ''), headers: headers(ctx.apiKey) }),
  parseModels: openAIShapes.parseModels,
  embeddingsRequest(body, ctx) {
    const out: Record<string, unknown> = { ...body, model: deploymentFor(ctx.provider, ctx.model) };
    delete out.user;
    return { method: 'POST', url: azureUrl(ctx, 'embeddings', ctx.model), headers: headers(ctx.apiKey), body: JSON.stringify(out) };
  },
  embeddingsResponse: openAIShapes.embeddingsResponse,
  // Both API shapes serve these paths; the v1 API reads the deployment from the body's `model`.
  passthroughRequest: (path, body, ctx) =>
    openAIPassthroughRequest(azureUrl(ctx, path.slice(1) as AzureOp, ctx.model), headers(ctx.apiKey), body, deploymentFor(ctx.provider, ctx.model)),
};
