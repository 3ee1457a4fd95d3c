/** Anthropic `stop_reason` → OpenAI `finish_reason` (protocol.md §10.1). */
const TABLE: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // The turn is whole as far as an OpenAI client can tell; it cannot "continue" a server-tool pause.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** Unknown reasons pass through (as one-api does) so new ones stay visible instead of becoming `stop`. */
export function toFinishReason(stopReason: string | null | undefined): string {
  if (typeof stopReason !== 'string' || stopReason === '') return 'stop';
  return TABLE[stopReason] ?? stopReason;
}
