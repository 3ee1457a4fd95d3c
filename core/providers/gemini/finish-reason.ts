/**
 * Gemini `finishReason` → OpenAI `finish_reason` (protocol.md §10.2). OpenAI clients compare against
 * the lowercase values, so nothing is ever copied through verbatim.
 */
export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

const CONTENT_FILTER = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
  'IMAGE_OTHER',
  'NO_IMAGE',
]);

/**
 * Gemini reports `STOP` when it answers with function calls, and agent loops wait for `tool_calls`,
 * so any reason that would read as `stop` becomes `tool_calls` once a call was produced. `length` and
 * `content_filter` keep their meaning even then: the client should know the turn was cut.
 */
export function toFinishReason(reason: string | null | undefined, sawFunctionCall: boolean): OpenAIFinishReason {
  let mapped: OpenAIFinishReason = 'stop';
  if (reason === 'MAX_TOKENS' || reason === 'CONTINUATION') mapped = 'length';
  else if (reason !== null && reason !== undefined && CONTENT_FILTER.has(reason)) mapped = 'content_filter';
  // STOP, OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS,
  // FINISH_REASON_UNSPECIFIED and reasons newer than this table all read as a plain stop.
  return mapped === 'stop' && sawFunctionCall ? 'tool_calls' : mapped;
}
