/**
 * The neutral model of one model call, shared by every inbound protocol (front ends) and every provider
 * (adapters). A front end parses its protocol into a `CallRequest` and renders `CallEvent`s back; an
 * adapter encodes a `CallRequest` for its upstream and decodes the upstream's answer into `CallEvent`s.
 * Admission, routing, failover, cost and audit see only this model.
 *
 * What one protocol can say and the others cannot is kept, not dropped: opaque provider data (thinking
 * signatures, encrypted reasoning, Gemini thought signatures) travels in `ReasoningPart.opaque` tagged with
 * the provider kind that made it, so it is only ever sent back to that kind; fields the model does not
 * know travel in `extra` for the upstream that speaks the same protocol.
 *
 * Shared between engineers: change it additively (new optional fields, new union members).
 */
import type { Usage } from '../usage.ts';

/** Which wire protocol a front end or an upstream speaks. */
export type WireProtocol = 'openai-chat' | 'openai-completions' | 'anthropic-messages' | 'openai-responses' | 'gemini';

/** Prompt-caching hint (Anthropic `cache_control`, also accepted on OpenAI-format parts). */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextPart {
  type: 'text';
  text: string;
  cacheControl?: CacheControl;
}

export interface ImagePart {
  type: 'image';
  /** Either a URL (http(s) or data:) or base64 data with its media type. */
  source: { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };
  /** OpenAI's `detail`, when given. */
  detail?: string;
  cacheControl?: CacheControl;
}

/** A file/document part (Anthropic `document`, OpenAI `file`, Responses `input_file`), kept opaque. */
export interface DocumentPart {
  type: 'document';
  /** The protocol the raw block came from, and the block as sent. */
  protocol: WireProtocol;
  raw: Record<string, unknown>;
  cacheControl?: CacheControl;
}

/** The model asked for a tool (assistant side). `arguments` is the JSON text as the model wrote it. */
export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  arguments: string;
  /** `function` tools take JSON arguments; `custom` tools (Responses, e.g. `apply_patch`) take free text. */
  kind: 'function' | 'custom';
  /** Provider data that must go back with this call (e.g. Gemini `thoughtSignature`). */
  opaque?: OpaqueData;
}

/** The result of a tool call (user/tool side). */
export interface ToolResultPart {
  type: 'tool-result';
  callId: string;
  /** Text, or richer parts (text and images). */
  content: string | Array<TextPart | ImagePart>;
  isError?: boolean;
  kind?: 'function' | 'custom';
  cacheControl?: CacheControl;
}

/** Data only the provider kind that produced it can read back (signatures, encrypted reasoning). */
export interface OpaqueData {
  /** e.g. 'anthropic', 'openai', 'gemini', 'deepseek': who may receive it again. */
  origin: string;
  value: string;
}

/** Reasoning the model showed (thinking). Never forged: a part without `opaque` is plain text. */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  /** Anthropic `signature`, OpenAI `encrypted_content`, DeepSeek's `reasoning_content` echo... */
  opaque?: OpaqueData;
  /** Anthropic `redacted_thinking` (`data` in `opaque`), shown to nobody. */
  redacted?: boolean;
  /** Responses reasoning item id, when it came from one. */
  itemId?: string;
}

export type ContentPart = TextPart | ImagePart | DocumentPart | ToolCallPart | ToolResultPart | ReasoningPart;

export interface CallMessage {
  /** `system`: an instruction in the middle of the conversation (Claude Code sends these). */
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: ContentPart[];
  /** OpenAI `name` on a message, when given. */
  name?: string;
}

export interface ToolDefinition {
  kind: 'function' | 'custom';
  name: string;
  description?: string;
  /** JSON Schema of the arguments (function tools). */
  parameters?: Record<string, unknown>;
  /** Custom tools' input format (Responses `format`: grammar or text), kept as sent. */
  format?: Record<string, unknown>;
  strict?: boolean;
  cacheControl?: CacheControl;
}

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export interface ReasoningRequest {
  /** OpenAI-style effort, when the client gave one. */
  effort?: 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'none';
  /** Anthropic-style thinking budget in tokens. */
  budgetTokens?: number;
  /** Anthropic `adaptive`, or enabled without a budget. */
  enabled?: boolean;
  /** Whether the client wants the reasoning text shown (Responses `summary`, Anthropic `display`). */
  summary?: string;
}

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface CallRequest {
  /** The protocol the client spoke: decides the response's shape and the native pass-through. */
  inbound: WireProtocol;
  /** The model as the client named it (before resolution). */
  model: string;
  /** System and developer instructions, in order. */
  system: TextPart[];
  messages: CallMessage[];
  tools: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  /** The most output tokens the client allows, when it said. */
  maxOutputTokens: number | null;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  /** How many choices (OpenAI `n`); 1 elsewhere. */
  n: number;
  seed?: number;
  reasoning?: ReasoningRequest;
  responseFormat?: ResponseFormat;
  stream: boolean;
  /** Whether a streaming client asked to see usage (OpenAI `stream_options.include_usage`); others always see it. */
  streamUsage: boolean;
  /** `service_tier` as asked (priced differently by some providers). */
  serviceTier?: string;
  /** A top-level prompt-cache hint (Anthropic's top-level `cache_control`). */
  cacheControl?: CacheControl;
  /** Fields this model does not know, for an upstream of the same protocol. */
  extra: Record<string, unknown>;
  /** Client headers an upstream of the same protocol must see (e.g. `anthropic-beta`, `anthropic-version`). */
  forwardHeaders: Record<string, string>;
  /** The client's body as parsed, for native pass-through (only `model` is rewritten). */
  raw: Record<string, unknown>;
}

/** Why the model stopped, in the shared vocabulary and in the provider's own words. */
export interface FinishReason {
  unified: 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'pause' | 'error' | 'other';
  raw: string | null;
}

/**
 * The events of an answer, in order. Blocks are sequential per choice: a `*-start` opens a block, its
 * deltas follow, `block-end` closes it. `choice` is 0 unless the request asked for `n > 1`.
 */
export type CallEvent =
  | { type: 'start'; id: string; model: string; created?: number }
  | { type: 'text-delta'; choice: number; text: string }
  | { type: 'reasoning-delta'; choice: number; text: string }
  /** The reasoning block's opaque data (Anthropic signature, encrypted content), when complete. */
  | { type: 'reasoning-opaque'; choice: number; opaque: OpaqueData; redacted?: boolean }
  | { type: 'tool-call-start'; choice: number; index: number; id: string; name: string; kind: 'function' | 'custom'; opaque?: OpaqueData }
  | { type: 'tool-call-delta'; choice: number; index: number; argumentsDelta: string }
  | { type: 'block-end'; choice: number }
  | { type: 'finish'; choice: number; reason: FinishReason }
  /** Usage of the whole call so far (cumulative; the last one wins). */
  | { type: 'usage'; usage: Usage }
  /** Keep-alive during a silence (Anthropic `ping`); front ends may relay or ignore it. */
  | { type: 'ping' }
  | { type: 'error'; status: number; errorType: string; code: string | null; message: string };

/** A whole answer, as a non-stream call returns it (or as a stream accumulates it). */
export interface CallResult {
  id: string;
  model: string;
  created: number;
  choices: Array<{ content: ContentPart[]; finish: FinishReason }>;
  usage: Usage | null;
}
