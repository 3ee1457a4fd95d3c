/** The checks a chat request must pass before any provider is bothered. */
import { badRequest } from '../errors.ts';
import type { ChatRequest } from '../providers/types.ts';

export function validateChatRequest(body: Record<string, unknown>): ChatRequest {
  if (!('model' in body) || body.model === null || body.model === '') {
    throw badRequest('You must provide a model parameter.', 'missing_parameter', 'model');
  }
  if (typeof body.model !== 'string') throw badRequest("Invalid type for 'model': expected a string.", 'invalid_type', 'model');
  if (!('messages' in body)) throw badRequest("Missing required parameter: 'messages'.", 'missing_parameter', 'messages');
  if (!Array.isArray(body.messages)) {
    throw badRequest("Invalid type for 'messages': expected an array of message objects.", 'invalid_type', 'messages');
  }
  if (body.messages.length === 0) {
    throw badRequest("Invalid 'messages': empty array. Expected an array with minimum length 1.", 'empty_array', 'messages');
  }
  for (let i = 0; i < body.messages.length; i++) {
    const m = body.messages[i] as { role?: unknown } | null;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      throw badRequest(`Invalid type for 'messages[${i}]': expected an object.`, 'invalid_type', `messages[${i}]`);
    }
    if (typeof m.role !== 'string') {
      throw badRequest(`Missing required parameter: 'messages[${i}].role'.`, 'missing_parameter', `messages[${i}].role`);
    }
  }
  if ('stream' in body && body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw badRequest("Invalid type for 'stream': expected a boolean.", 'invalid_type', 'stream');
  }
  if (body.stream_options != null && body.stream !== true) {
    throw badRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'invalid_value', 'stream_options');
  }
  return body as ChatRequest;
}

export const clientWantsUsage = (body: ChatRequest): boolean =>
  !!(body.stream_options && typeof body.stream_options === 'object' && (body.stream_options as { include_usage?: unknown }).include_usage === true);
