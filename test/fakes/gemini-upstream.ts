import { randomBytes } from 'node:crypto';
import { startFakeServer } from './fault.ts';
import type { Exchange, FakeOptions, FakeUpstream, ProviderSpec, SseEvent } from './fault.ts';
import { countWords, fakeEmbedding, runScenario } from './scenario.ts';
import type { ScenarioFinish, ScenarioInput, ScenarioMessage, ScenarioReply } from './scenario.ts';

// A fake Gemini API (generativelanguage, v1beta and v1): generateContent, streamGenerateContent (SSE with
// ?alt=sse, else one JSON array), embedContent, batchEmbedContents and the model list, shapes per
// reference/protocol.md §10.2. Streams carry no [DONE] and no event names; usage is a running total.
//
// `gemini-3*` models behave as Gemini 3 does with thought signatures: the first functionCall part of a
// step carries a `thoughtSignature`, and a request whose current turn replays a model functionCall step
// without a signature this fake issued is refused with Gemini's 400 (ai.google.dev/gemini-api/docs/thought-signatures).

export function startGeminiUpstream(options?: Partial<FakeOptions>): Promise<FakeUpstream> {
  return startFakeServer(geminiSpec, options);
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const STATUS_MESSAGES: Record<number, string> = {
  401: 'API key not valid. Please pass a valid API key.',
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
};

export interface GeminiErrorBody {
  error: { code: number; message: string; status: string };
}

export function geminiError(status: number, message?: string): GeminiErrorBody {
  return {
    error: {
      code: status,
      message: message ?? STATUS_MESSAGES[status] ?? `Fake upstream error ${status}.`,
      status: STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION'),
    },
  };
}

// `models/{model}:{method}`; the model part may itself be percent-encoded.
const ROUTE = /^\/(?:v1beta|v1)\/models(?:\/([^:/]+))?(?::([A-Za-z]+))?$/;

const geminiSpec: ProviderSpec = {
  basePath: '',
  defaultModels: ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-embedding-001'],
  errorReply: (status) => ({ body: geminiError(status) }),
  handle: async (x) => {
    const fail = (status: number, message?: string) => x.json(status, geminiError(status, message));
    const key = x.options.requireKey;
    if (key !== undefined && x.headers['x-goog-api-key'] !== key && x.query.get('key') !== key) return fail(401);

    const match = ROUTE.exec(x.path);
    if (!match) return fail(404, `Requested entity was not found: ${x.path}`);
    const model = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
    const method = match[2];
    if (x.method === 'GET' && model === undefined && method === undefined) {
      return x.json(200, { models: x.options.models.map(modelObject) });
    }
    if (x.method === 'GET' && model !== undefined && method === undefined) {
      return x.options.models.includes(model) ? x.json(200, modelObject(model)) : fail(404, `models/${model} is not found.`);
    }
    if (x.method === 'POST' && model !== undefined) {
      switch (method) {
        case 'generateContent':
          return generate(x, model, fail, 'json');
        case 'streamGenerateContent':
          return generate(x, model, fail, x.query.get('alt') === 'sse' ? 'sse' : 'array');
        case 'embedContent':
          return embedOne(x, fail);
        case 'batchEmbedContents':
          return embedBatch(x, fail);
      }
    }
    return fail(404, `Requested entity was not found: ${x.method} ${x.path}`);
  },
};

function modelObject(id: string) {
  const embedding = id.includes('embedding');
  return {
    name: `models/${id}`,
    version: '001',
    displayName: id,
    description: `Fake ${id}`,
    inputTokenLimit: embedding ? 2048 : 1_048_576,
    outputTokenLimit: embedding ? 1 : 65_536,
    supportedGenerationMethods: embedding ? ['embedContent', 'batchEmbedContents'] : ['generateContent', 'countTokens'],
  };
}

// ---- request → scenario ----

interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name?: string; args?: unknown };
  functionResponse?: { name?: string; response?: unknown };
}
interface Content {
  role?: string;
  parts?: Part[];
}
interface GenerateBody {
  contents?: unknown;
  systemInstruction?: Content | string;
  tools?: { functionDeclarations?: { name?: string }[] }[];
  generationConfig?: { maxOutputTokens?: number; responseMimeType?: string };
}

function partsText(parts: Part[] | undefined): string {
  return (parts ?? [])
    .filter((p) => typeof p.text === 'string' && !p.thought)
    .map((p) => p.text)
    .join(' ');
}

/**
 * A functionResponse.response is an object; adapters usually wrap the tool's text in one field, so a
 * lone string under a conventional key is "the result content as text", anything else is its JSON.
 */
function responseText(response: unknown): string {
  if (typeof response === 'string') return response;
  if (typeof response === 'object' && response !== null) {
    for (const key of ['content', 'result', 'output', 'text']) {
      const value = (response as Record<string, unknown>)[key];
      if (typeof value === 'string') return value;
    }
  }
  return JSON.stringify(response ?? null);
}

function toMessage(c: Content): ScenarioMessage {
  const parts = c.parts ?? [];
  const results = parts.filter((p) => p.functionResponse);
  if (results.length > 0) return { role: 'tool', text: results.map((p) => responseText(p.functionResponse?.response)).join(' ') };
  const calls = parts.flatMap((p) => (p.functionCall ? [`${p.functionCall.name ?? ''} ${JSON.stringify(p.functionCall.args ?? {})}`] : []));
  return { role: c.role === 'model' ? 'assistant' : 'user', text: [partsText(parts), ...calls].filter(Boolean).join(' ') };
}

export function toScenario(body: GenerateBody): ScenarioInput {
  const sys = body.systemInstruction;
  return {
    system: sys === undefined ? undefined : typeof sys === 'string' ? sys : partsText(sys.parts),
    messages: (body.contents as Content[]).map(toMessage),
    toolNames: (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).flatMap((f) => (f.name ? [f.name] : []))),
    json: body.generationConfig?.responseMimeType === 'application/json',
    maxTokens: body.generationConfig?.maxOutputTokens,
  };
}

// ---- response ----

const FINISH_REASONS: Record<ScenarioFinish, string> = { stop: 'STOP', length: 'MAX_TOKENS', tool_calls: 'STOP' };

/**
 * promptTokenCount includes the cached tokens; candidatesTokenCount excludes thoughts; the total adds
 * all three. Zero-valued optional counters are omitted, as the real API does.
 */
export function geminiUsage(reply: ScenarioReply, options: FakeOptions, candidates = reply.completionTokens) {
  const cached = options.cachedTokens ?? 0;
  const thoughts = options.reasoningTokens ?? 0;
  const prompt = reply.promptTokens + cached;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates + thoughts,
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  };
}

// ---- thought signatures (Gemini 3) ----

const PLACEHOLDER_SIGNATURE = 'skip_thought_signature_validator';
const issuedSignatures = new Set<string>();
let lastIssued: string | undefined;

/** The signature the fakes issued last (tests compare it with what the gateway sent back). */
export const lastIssuedThoughtSignature = (): string | undefined => lastIssued;

const signsCalls = (model: string): boolean => model.startsWith('gemini-3');

function issueSignature(): string {
  // Real signatures are opaque base64 blobs of a few hundred bytes.
  const sig = randomBytes(96).toString('base64');
  issuedSignatures.add(sig);
  lastIssued = sig;
  return sig;
}

/**
 * Gemini 3 validates the current turn only: the model steps after the last user message that is not a
 * function response. In each such step, the first functionCall part must carry its signature.
 */
function signatureError(contents: Content[], options: FakeOptions): string | null {
  let turnStart = 0;
  contents.forEach((c, i) => {
    const parts = c.parts ?? [];
    if (c.role !== 'model' && !parts.some((p) => p.functionResponse)) turnStart = i + 1;
  });
  for (let i = turnStart; i < contents.length; i++) {
    const c = contents[i];
    if (c.role !== 'model') continue;
    const parts = c.parts ?? [];
    const first = parts.findIndex((p) => p.functionCall);
    if (first < 0) continue;
    const sig = parts[first].thoughtSignature;
    const ok = typeof sig === 'string' && (issuedSignatures.has(sig) || (options.acceptPlaceholderSignature === true && sig === PLACEHOLDER_SIGNATURE));
    if (ok) continue;
    const name = parts[first].functionCall?.name ?? '';
    if (typeof sig === 'string' && sig !== '') return `Thought signature is not valid. Function call \`default_api:${name}\`, content ${i}.`;
    return (
      'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing ' +
      `thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${first + 1}. ` +
      'Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.'
    );
  }
  return null;
}

async function generate(
  x: Exchange,
  model: string,
  fail: (status: number, message?: string) => Promise<void>,
  mode: 'json' | 'sse' | 'array',
): Promise<void> {
  const body = x.body as GenerateBody;
  if (typeof body !== 'object' || body === null) return fail(400, 'Invalid JSON payload received.');
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return fail(400, '* GenerateContentRequest.contents: contents is not specified');
  }
  if (signsCalls(model)) {
    const refused = signatureError(body.contents as Content[], x.options);
    if (refused !== null) return fail(400, refused);
  }
  const reply = runScenario({ ...toScenario(body), forcedTool: x.options.toolCall });
  const responseId = randomBytes(12).toString('base64url');
  const envelope = (parts: Part[], candidates: number, finish?: string) => ({
    candidates: [{ content: { role: 'model', parts }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
    ...(x.options.omitUsage ? {} : { usageMetadata: geminiUsage(reply, x.options, candidates) }),
    modelVersion: model,
    responseId,
  });
  const finish = FINISH_REASONS[reply.finish];
  const call = reply.toolCall;
  // Parallel calls: only the first part of a step carries the signature, as Gemini 3 does.
  const callPart = (): Part[] =>
    call
      ? Array.from({ length: Math.max(1, x.options.parallelCalls ?? 1) }, (_, i) => ({
          functionCall: { name: call.name, args: call.arguments },
          ...(i === 0 && signsCalls(model) ? { thoughtSignature: issueSignature() } : {}),
        }))
      : [];

  if (mode === 'json') {
    const parts = call ? callPart() : [{ text: reply.text }];
    return x.json(200, envelope(parts, reply.completionTokens, finish));
  }

  const chunks: object[] = [];
  if (call) {
    // Gemini never fragments a function call.
    chunks.push(envelope(callPart(), reply.completionTokens, finish));
  } else {
    const pieces = reply.pieces.length > 0 ? reply.pieces : [''];
    let soFar = '';
    pieces.forEach((piece, i) => {
      soFar += piece;
      const last = i === pieces.length - 1;
      chunks.push(envelope([{ text: piece }], countWords(soFar), last ? finish : undefined));
    });
  }
  if (mode === 'array') return x.json(200, chunks);
  return x.sse(chunks.map((c): SseEvent => ({ data: JSON.stringify(c) })));
}

// ---- embeddings ----

interface EmbedRequest {
  content?: Content;
  outputDimensionality?: number;
}

function embedValues(req: EmbedRequest): number[] | null {
  const text = partsText(req.content?.parts);
  if (text === '') return null;
  return fakeEmbedding(text, req.outputDimensionality ?? 8);
}

async function embedOne(x: Exchange, fail: (status: number, message?: string) => Promise<void>): Promise<void> {
  const values = embedValues((x.body ?? {}) as EmbedRequest);
  if (!values) return fail(400, '* EmbedContentRequest.content: contents is not specified');
  return x.json(200, { embedding: { values } });
}

async function embedBatch(x: Exchange, fail: (status: number, message?: string) => Promise<void>): Promise<void> {
  const requests = (x.body as { requests?: EmbedRequest[] } | null)?.requests;
  if (!Array.isArray(requests) || requests.length === 0) return fail(400, '* BatchEmbedContentsRequest.requests: requests is not specified');
  const all = requests.map(embedValues);
  if (all.some((v) => v === null)) return fail(400, '* BatchEmbedContentsRequest.requests[].content: contents is not specified');
  return x.json(200, { embeddings: all.map((values) => ({ values })) });
}
