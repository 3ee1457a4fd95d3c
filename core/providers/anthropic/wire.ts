/**
 * The slice of the Anthropic Messages API wire format this adapter reads or writes
 * (`anthropic-sdk-python: types/*`, `@anthropic-ai/sdk: resources/messages`). Response-side
 * types mark fields optional where the API has been seen to omit them, because they describe
 * untrusted JSON, not a contract we control.
 */

export const ANTHROPIC_VERSION = '2023-06-01';

// ---- request ----

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: unknown;
}

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };

export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicImageSource;
}

export interface AnthropicDocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: string; data: string };
  title?: string;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock>;
}

export type AnthropicRequestBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}

export type AnthropicToolChoice =
  | { type: 'none' }
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string | AnthropicTextBlock[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stream?: true;
}

// ---- response ----

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** Newer API versions: a read-only split of `output_tokens`, which stays the billed total. */
  output_tokens_details?: { thinking_tokens?: number | null } | null;
  /** The cache writes split by TTL (5-minute and 1-hour writes have different prices). */
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  /** `priority` when the request ran on Priority Tier capacity. */
  service_tier?: string | null;
}

export type AnthropicResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  // Server tools, citations-only blocks and whatever comes next: never shown to OpenAI clients.
  | { type: string; [key: string]: unknown };

export interface AnthropicResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  stop_reason: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsage;
}

// ---- stream events (the `data:` of each named SSE event) ----

export interface MessageStartEvent {
  type: 'message_start';
  message: Omit<AnthropicResponse, 'content'> & { content?: unknown[] };
}

export interface ContentBlockStartEvent {
  type: 'content_block_start';
  index: number;
  content_block: AnthropicResponseBlock;
}

export type AnthropicDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation: unknown };

export interface ContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta: AnthropicDelta;
}

export interface MessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason: string | null; stop_sequence?: string | null };
  /** Cumulative counts; newer API versions repeat the input side here too. */
  usage?: AnthropicUsage;
}

// ---- errors ----

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id?: string | null;
}
