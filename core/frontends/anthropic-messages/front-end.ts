/** The Anthropic Messages front end (Claude Code, the Anthropic SDKs). */
import type { FrontEnd } from '../../pipeline/front-end.ts';
import { anthropicErrorResponse } from './errors.ts';
import { parseMessagesRequest } from './parse.ts';
import { renderMessage } from './render.ts';
import { AnthropicStreamRenderer } from './stream.ts';

export const anthropicMessagesFrontEnd: FrontEnd = {
  protocol: 'anthropic-messages',
  parse: (body, headers) => parseMessagesRequest(body, headers),
  render: (result, meta, end) => renderMessage(result, meta, end),
  stream: (_req, meta) => new AnthropicStreamRenderer(meta),
  error: (err, requestId) => anthropicErrorResponse(err, requestId),
  headers: (requestId) => ({ 'request-id': requestId }),
};
