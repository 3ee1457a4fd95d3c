/**
 * The Anthropic Messages API adapter. Each translation step lives in its own file; this one only
 * wires them into the `ProviderAdapter` shape. No embeddings: Anthropic serves none.
 */
import type { ProviderAdapter } from '../types.ts';
import { parseAnthropicError } from './errors.ts';
import { anthropicBase, anthropicHeaders, chatRequest } from './request.ts';
import { chatResponse } from './response.ts';
import { chatStream } from './stream.ts';
import { AnthropicFrameDecoder, decodeAnthropicResult } from './decode-call.ts';
import { anthropicCallRequest } from './encode-call.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export const anthropicAdapter: ProviderAdapter = {
  type: 'anthropic',
  protocol: 'anthropic-messages',
  neutral: {
    encodeCall: anthropicCallRequest,
    decodeCall: (json, ctx) => decodeAnthropicResult(json, ctx.model),
    callFrames: (ctx) => new AnthropicFrameDecoder(ctx.model),
  },
  chatRequest,
  chatResponse,
  chatStream: (ctx) => chatStream(ctx.model),
  parseError: parseAnthropicError,
  modelsRequest: (ctx) => ({
    method: 'GET',
    // The API pages at 20 by default; 1000 is its maximum and far above the number of Claude models.
    url: `${anthropicBase(ctx.provider.baseUrl)}/v1/models?limit=1000`,
    headers: anthropicHeaders(ctx.apiKey, false),
  }),
  parseModels: (json) => {
    const data = isObj(json) && Array.isArray(json.data) ? json.data : [];
    return data.flatMap((m) => (isObj(m) && typeof m.id === 'string' && m.id !== '' ? [m.id] : []));
  },
};
