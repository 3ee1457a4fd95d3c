/**
 * The provider adapter interface. An adapter is pure translation: it turns an OpenAI-shaped request
 * into the HTTP request its provider expects, and the provider's answers (JSON, SSE events, errors)
 * back into OpenAI shapes plus normalised usage. Transport, retries, failover and accounting live
 * elsewhere, so an adapter never does I/O.
 */
import type { Usage } from '../usage.ts';
import type { CallEvent, CallRequest, CallResult } from '../pipeline/call-model.ts';

export const PROVIDER_TYPES = ['openai', 'openai-compatible', 'anthropic', 'gemini', 'azure', 'demo'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** A provider's non-secret settings, as stored in SQLite. */
export interface ProviderSettings {
  name: string;
  type: ProviderType;
  preset: string | null;
  /** What the provider's own SDK calls its base URL (OpenAI-style includes `/v1`). */
  baseUrl: string;
  /** A fixed model list, or null to discover it from the provider. */
  models: string[] | null;
  priority: number;
  /** Name of an environment variable holding the key, read at request time. */
  keyEnv: string | null;
  /** Where the secret lives: the OS keychain, an env var, or nowhere (local servers, demo). */
  keySource: 'keychain' | 'env' | 'none';
  /** Type-specific options, e.g. Azure `apiVersion` and `deployments`. */
  options: Record<string, unknown>;
  /** Insertion order, used to break priority ties. */
  seq: number;
}

/** An OpenAI chat completion request body, kept as parsed JSON so unknown fields pass through. */
export type ChatRequest = Record<string, unknown> & {
  model: string;
  messages: unknown[];
  stream?: boolean;
};

export interface UpstreamRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** A binary body (multipart uploads), sent instead of `body`. */
  bodyBytes?: Uint8Array;
}

export interface CallContext {
  provider: ProviderSettings;
  /** The model id as this provider names it. */
  model: string;
  /** The provider secret, or null when the provider needs none. */
  apiKey: string | null;
  stream: boolean;
  /** Client headers this upstream must see (e.g. `anthropic-beta` for an Anthropic provider). */
  forwardHeaders?: Record<string, string>;
  /** The client's own JSON text of the body, sent as-is (no re-serialising) when none of the adapter's rewrites apply. */
  bodyText?: string;
  /** The same body as the bytes the client sent: sent instead of `bodyText` when that goes unchanged (no encoding again). */
  bodyBytes?: Uint8Array;
  /**
   * The client allowed one tool call per answer (`parallel_tool_calls: false`, Anthropic's
   * `disable_parallel_tool_use`): an adapter whose provider has no such switch (Gemini) keeps the first.
   */
  oneToolCall?: boolean;
}

/** A non-stream result: an OpenAI `chat.completion` object (usage included when known). */
export interface ChatResult {
  body: Record<string, unknown>;
  usage: Usage | null;
}

/** One server-sent event as it came off the wire. */
export interface SseEvent {
  event: string | null;
  data: string;
}

export interface UpstreamFailure {
  status: number;
  message: string;
  type: string | null;
  code: string | null;
  /** The request field the provider blamed (OpenAI `param`), passed on with a client error. */
  param?: string | null;
  /** From `retry-after-ms` / `retry-after`, when the provider said. */
  retryAfterMs?: number;
  /** The error body as the provider sent it (HTTP errors), for a pass-through of the same protocol. */
  body?: string;
}

export type StreamPiece =
  /** An OpenAI `chat.completion.chunk`, serialised, without any `usage` field. `text` is its content delta (for estimates). */
  | { kind: 'chunk'; json: string; text: string }
  /**
   * The usage of the whole call; `chunk` is the `choices: []` usage chunk to send if the client asked, and `text`
   * that chunk as the upstream wrote it, when it can go out as written (with `cost` spliced in).
   */
  | { kind: 'usage'; usage: Usage; chunk: Record<string, unknown>; text?: string }
  /** The upstream reported an error inside the stream. */
  | { kind: 'error'; failure: UpstreamFailure }
  /** The upstream said the stream is complete (`[DONE]`, `message_stop`, final Gemini event). */
  | { kind: 'end' };

export interface StreamTranslator {
  push(event: SseEvent): StreamPiece[];
  /** Called when the upstream connection closed; returns anything still pending. */
  finish(): StreamPiece[];
  /** The usage the stream reported so far (Anthropic's `message_start`, Gemini's last `usageMetadata`), to bill a cut stream. */
  usageSoFar?(): Usage | null;
}

/**
 * What a frame decoder hands the pipeline: neutral events for a front end to render, or (native
 * pass-through) a frame of the client's own protocol to relay as it came, with usage read on the side.
 */
export type Frame =
  | { kind: 'event'; event: CallEvent }
  /** A native frame: `data` (and its `event:` name) written to the client as-is; `text` is its visible text (for estimates). */
  | { kind: 'raw'; data: string; event?: string; text: string; good: boolean }
  /**
   * The usage of the whole call so far; `raw` is the upstream's own usage object or chunk, when a native renderer
   * wants it, and `rawText` that chunk's text as the upstream wrote it, when it can go out as written.
   */
  | { kind: 'usage'; usage: Usage; raw?: Record<string, unknown>; rawText?: string }
  /** The upstream reported an error in the stream; `raw` is its native event text, relayed verbatim by a pass-through. */
  | { kind: 'error'; failure: UpstreamFailure; raw?: { event?: string; data: string } }
  | { kind: 'end' };

export interface FrameDecoder {
  push(event: SseEvent): Frame[];
  /** The upstream connection closed; returns anything still pending (an `error` when the stream was cut). */
  finish(): Frame[];
  /** Optional: the usage reported so far, for billing a stream cut before its final usage. */
  usageSoFar?(): Usage | null;
}

/** The neutral half of an adapter: the call model in, the call model out. */
export interface NeutralCodec {
  /** The upstream request for a neutral call (only what this upstream understands is sent). */
  encodeCall(req: CallRequest, ctx: CallContext): UpstreamRequest;
  /** A non-stream answer, decoded. */
  decodeCall(json: unknown, ctx: CallContext, req: CallRequest): CallResult;
  /** A decoder of this upstream's stream frames into neutral events. */
  callFrames(ctx: CallContext, req: CallRequest): FrameDecoder;
}

export interface EmbeddingsResult {
  /** An OpenAI embeddings list with `float` vectors. */
  body: Record<string, unknown>;
  usage: Usage | null;
}

export interface ProviderAdapter {
  readonly type: ProviderType;
  /** The wire protocol this upstream speaks natively (a front end of the same protocol passes bodies through). */
  readonly protocol: 'openai-chat' | 'anthropic-messages' | 'gemini';
  /** Neutral encode/decode (every adapter). */
  readonly neutral: NeutralCodec;
  chatRequest(body: ChatRequest, ctx: CallContext): UpstreamRequest;
  chatResponse(json: unknown, ctx: CallContext): ChatResult;
  chatStream(ctx: CallContext): StreamTranslator;
  /** Maps an error response of this provider to a failure; `bodyText` may be anything, even HTML. */
  parseError(status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): UpstreamFailure;
  /** The request that lists the provider's models, or null if it cannot list them. */
  modelsRequest(ctx: Omit<CallContext, 'model' | 'stream'>): UpstreamRequest | null;
  parseModels(json: unknown): string[];
  /** Optional: providers that serve embeddings. The body is OpenAI-shaped. */
  embeddingsRequest?(body: Record<string, unknown>, ctx: CallContext): UpstreamRequest;
  embeddingsResponse?(json: unknown, ctx: CallContext): EmbeddingsResult;
  /**
   * Optional: OpenAI-protocol providers only. The request for an endpoint whose body is forwarded as the
   * client sent it (legacy completions, images, audio); only the model name is the adapter's to choose.
   */
  passthroughRequest?(path: PassthroughPath, body: PassthroughBody, ctx: CallContext): UpstreamRequest;
}

/** The OpenAI endpoints (relative to the base URL) served by `passthroughRequest`. */
export type PassthroughPath = '/completions' | '/images/generations' | '/audio/transcriptions' | '/audio/translations';

export interface PassthroughBody {
  /** `application/json`, or `multipart/form-data; boundary=...` exactly as the client sent it. */
  contentType: string;
  /** The body, with `model` set to the name this provider expects on the wire (Azure: the deployment). */
  build(wireModel: string): string | Uint8Array;
}
