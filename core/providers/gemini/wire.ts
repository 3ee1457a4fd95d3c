/**
 * The Gemini Developer API wire format (ai.google.dev/api, `v1beta`), limited to what the adapter
 * sends or reads. Answers are typed as all-optional because the adapter reads them defensively field
 * by field; there is no schema validation on the hot path, where every stream event would pay for it.
 */

// ---- request ----

export interface GeminiInlineData {
  mimeType: string;
  /** Base64, no data-URL prefix. */
  data: string;
}

export interface GeminiFileData {
  fileUri: string;
  mimeType?: string;
}

export interface GeminiFunctionCall {
  name: string;
  args: Record<string, unknown>;
  /** Optional in the API and not used by this adapter (ids are minted on our side). */
  id?: string;
}

export interface GeminiFunctionResponse {
  name: string;
  response: Record<string, unknown>;
}

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  /** Opaque base64 blob Gemini 3 requires back on the first functionCall part of a replayed model turn. */
  thoughtSignature?: string;
  inlineData?: GeminiInlineData;
  fileData?: GeminiFileData;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

export type GeminiRole = 'user' | 'model';

export interface GeminiContent {
  role: GeminiRole;
  parts: GeminiPart[];
}

/** The OpenAPI 3.0 subset Gemini accepts for function parameters and `responseSchema`. */
export type GeminiSchema = Record<string, unknown>;

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

export interface GeminiTool {
  functionDeclarations: GeminiFunctionDeclaration[];
}

export type GeminiFunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GeminiToolConfig {
  functionCallingConfig: {
    mode: GeminiFunctionCallingMode;
    allowedFunctionNames?: string[];
  };
}

export interface GeminiThinkingConfig {
  thinkingBudget: number;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  responseMimeType?: string;
  responseSchema?: GeminiSchema;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

export interface BatchEmbedContentsRequest {
  requests: Array<{
    model: string;
    content: { parts: Array<{ text: string }> };
    outputDimensionality?: number;
  }>;
}

// ---- responses ----

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GeminiResponsePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name?: string; args?: Record<string, unknown>; id?: string };
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiResponsePart[] };
  finishReason?: string;
  index?: number;
}

export interface GenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** `google.rpc.Status` as Gemini wraps it: `{"error":{code,message,status,details}}`. */
export interface GeminiErrorBody {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<Record<string, unknown>>;
}

export interface GeminiModelList {
  models?: Array<{ name?: string; supportedGenerationMethods?: string[] }>;
  nextPageToken?: string;
}

export interface BatchEmbedContentsResponse {
  embeddings?: Array<{ values?: number[] }>;
  usageMetadata?: { promptTokenCount?: number };
}
