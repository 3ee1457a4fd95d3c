/** The checks a chat request must pass before any provider is bothered: the schema, then the cross-field rules. */
import { badRequest } from '../errors.ts';
import type { ChatRequest } from '../providers/types.ts';
import { chatRequestSchema } from './schemas/chat.ts';
import { isPlainValidChat } from './schemas/chat-fast.ts';
import { parseRequest } from './schemas/common.ts';

export function validateChatRequest(body: Record<string, unknown>): ChatRequest {
  if (!('model' in body) || body.model === null || body.model === '') {
    throw badRequest('You must provide a model parameter.', 'missing_parameter', 'model');
  }
  if (Array.isArray(body.messages) && body.messages.length === 0) {
    throw badRequest("Invalid 'messages': empty array. Expected an array with minimum length 1.", 'empty_array', 'messages');
  }
  // The common request is plainly valid: the schema's walk is only for the others (same verdicts, same errors).
  const parsed = isPlainValidChat(body) ? body : parseRequest(chatRequestSchema, body);
  if (parsed.stream_options != null && parsed.stream !== true) {
    throw badRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'invalid_value', 'stream_options');
  }
  return parsed as ChatRequest;
}

export const clientWantsUsage = (body: ChatRequest): boolean =>
  !!(body.stream_options && typeof body.stream_options === 'object' && (body.stream_options as { include_usage?: unknown }).include_usage === true);
