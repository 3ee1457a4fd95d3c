/** The Google Gemini adapter (Gemini Developer API, `v1beta`): chat, streaming, models, embeddings. */
import type { CallContext, ProviderAdapter, UpstreamRequest } from '../types.ts';
import { embeddingsRequest, embeddingsResponse } from './embeddings.ts';
import { parseGeminiError } from './errors.ts';
import { chatRequest, geminiHeaders, geminiUrl } from './request.ts';
import { chatResponse } from './response.ts';
import { GeminiStreamTranslator } from './stream.ts';
import { geminiNeutralCodec } from './neutral.ts';
import type { GeminiModelList } from './wire.ts';

export { UnsupportedInputError } from './errors.ts';

/** Chat and embedding models; tuning-only, image-only (`predict`) and similar entries are left out. */
const SERVED_METHODS = ['generateContent', 'embedContent'];

function modelsRequest(ctx: Omit<CallContext, 'model' | 'stream'>): UpstreamRequest {
  // 1000 is the API's page maximum; the catalogue is far smaller, so one page is all of it.
  return { method: 'GET', url: geminiUrl(ctx.provider.baseUrl, 'models?pageSize=1000'), headers: geminiHeaders(ctx.apiKey, false) };
}

function parseModels(raw: unknown): string[] {
  const list = raw !== null && typeof raw === 'object' ? (raw as GeminiModelList).models : undefined;
  if (!Array.isArray(list)) return [];
  const ids = new Set<string>();
  for (const m of list) {
    if (m === null || typeof m !== 'object' || typeof m.name !== 'string') continue;
    const methods = m.supportedGenerationMethods;
    if (Array.isArray(methods) && !methods.some((x) => SERVED_METHODS.includes(x))) continue;
    ids.add(m.name.startsWith('models/') ? m.name.slice('models/'.length) : m.name);
  }
  return [...ids];
}

export const geminiAdapter: ProviderAdapter = {
  type: 'gemini',
  protocol: 'gemini',
  neutral: geminiNeutralCodec,
  chatRequest,
  chatResponse,
  chatStream: (ctx) => new GeminiStreamTranslator(ctx),
  parseError: (status, bodyText, headers) => parseGeminiError(status, bodyText, headers),
  modelsRequest,
  parseModels,
  embeddingsRequest,
  embeddingsResponse,
};
