import { randomBytes } from 'node:crypto';
import { startFakeServer } from './fault.ts';
import type { Exchange, FakeOptions, FakeUpstream, ProviderSpec, SseEvent } from './fault.ts';
import { countWords, fakeEmbedding, runScenario } from './scenario.ts';
import type { ScenarioInput, ScenarioMessage, ScenarioReply } from './scenario.ts';

// A fake OpenAI (or OpenAI-compatible) upstream: /v1/chat/completions, /v1/models, /v1/models/{id},
// /v1/embeddings, with the exact shapes of reference/protocol.md §2, §4 and §7. The quirk knobs in
// FakeOptions reproduce what compatible servers do differently, so the gateway's normalisation is testable.

export function startOpenAIUpstream(options?: Partial<FakeOptions>): Promise<FakeUpstream> {
  return startFakeServer(openaiSpec, options);
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openaiError(message: string, type: string, param: string | null = null, code: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

/** The body (and headers) the real API sends for a status, used by the `status` fault. */
export function openaiErrorFor(status: number): { body: OpenAIErrorBody; headers: Record<string, string> } {
  switch (status) {
    case 400:
      return { body: openaiError('Invalid request (fake).', 'invalid_request_error'), headers: {} };
    case 401:
      return { body: openaiError('Incorrect API key provided: sk-fak***key.', 'invalid_request_error', null, 'invalid_api_key'), headers: {} };
    case 403:
      return { body: openaiError('You are not allowed to sample from this model (fake).', 'invalid_request_error'), headers: {} };
    case 404:
      return { body: openaiError('The model does not exist or you do not have access to it (fake).', 'invalid_request_error', null, 'model_not_found'), headers: {} };
    case 429:
      return {
        body: openaiError('Rate limit reached for requests (fake).', 'requests', null, 'rate_limit_exceeded'),
        headers: { 'retry-after': '1' },
      };
    default:
      return status >= 500
        ? { body: openaiError('The server had an error while processing your request (fake).', 'server_error'), headers: {} }
        : { body: openaiError(`Fake upstream error ${status}.`, 'invalid_request_error'), headers: {} };
  }
}

const openaiSpec: ProviderSpec = {
  basePath: '/v1',
  defaultModels: ['gpt-4o', 'gpt-4o-mini', 'o4-mini', 'text-embedding-3-small'],
  requestIdHeader: 'x-request-id',
  errorReply: (status) => openaiErrorFor(status),
  handle: async (x) => {
    const route = `${x.method} ${x.path}`;
    if (x.options.requireKey !== undefined && x.headers.authorization !== `Bearer ${x.options.requireKey}`) {
      const { body } = openaiErrorFor(401);
      return x.json(401, body);
    }
    if (route === 'POST /v1/chat/completions') return chat(x);
    if (route === 'POST /v1/embeddings') return embeddings(x);
    if (route === 'GET /v1/models') return listModels(x);
    if (x.method === 'GET' && x.path.startsWith('/v1/models/')) return retrieveModel(x);
    return x.json(404, openaiError(`Invalid URL (${x.method} ${x.path})`, 'invalid_request_error'));
  },
};

// ---- chat completions ----

interface ChatContentPart {
  type: string;
  text?: string;
}
interface ChatToolCall {
  function?: { name?: string; arguments?: string };
}
interface ChatMessage {
  role?: string;
  content?: string | ChatContentPart[] | null;
  tool_calls?: ChatToolCall[];
}
interface ChatBody {
  model?: unknown;
  messages?: unknown;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  tools?: { type?: string; function?: { name?: string } }[];
  response_format?: { type?: string };
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  n?: number | null;
}

function contentText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join(' ');
}

export function toScenario(body: ChatBody): ScenarioInput {
  const messages = body.messages as ChatMessage[];
  const system: string[] = [];
  const turns: ScenarioMessage[] = [];
  for (const m of messages) {
    const text = contentText(m.content);
    if (m.role === 'system' || m.role === 'developer') {
      system.push(text);
    } else if (m.role === 'tool' || m.role === 'function') {
      turns.push({ role: 'tool', text });
    } else if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => `${c.function?.name ?? ''} ${c.function?.arguments ?? ''}`);
      turns.push({ role: 'assistant', text: [text, ...calls].filter(Boolean).join(' ') });
    } else {
      turns.push({ role: 'user', text });
    }
  }
  const format = body.response_format?.type;
  return {
    system: system.length > 0 ? system.join('\n') : undefined,
    messages: turns,
    toolNames: (body.tools ?? []).flatMap((t) => (t.function?.name ? [t.function.name] : [])),
    json: format === 'json_object' || format === 'json_schema',
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
  };
}

/** Cached tokens are part of prompt_tokens; reasoning tokens are part of completion_tokens. */
export function openaiUsage(reply: ScenarioReply, options: FakeOptions) {
  const cached = options.cachedTokens ?? 0;
  const reasoning = options.reasoningTokens ?? 0;
  const prompt = reply.promptTokens + cached;
  const completion = reply.completionTokens + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** DeepSeek's thinking mode: an assistant turn that made tool calls must bring its `reasoning_content` back. */
function reasoningNotBack(body: ChatBody, options: FakeOptions): ReturnType<typeof openaiError> | null {
  if (options.reasoningContent === undefined) return null;
  const messages = body.messages as Array<{ role?: unknown; tool_calls?: unknown; reasoning_content?: unknown }>;
  const missing = messages.some((m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && typeof m.reasoning_content !== 'string');
  return missing ? openaiError('The reasoning_content in the thinking mode must be passed back to the API.', 'invalid_request_error', null, 'invalid_request_error') : null;
}

/**
 * What OpenAI refuses of its older chat models, with its wording: `reasoning_effort` (only reasoning models take
 * it) and an output cap above the model's own (gpt-4o and gpt-4o-mini write 16,384 at most).
 */
function modelLimits(body: ChatBody): ReturnType<typeof openaiError> | null {
  const model = String(body.model);
  if (!/^gpt-4o/.test(model)) return null;
  const b = body as ChatBody & { reasoning_effort?: unknown; max_tokens?: unknown; max_completion_tokens?: unknown };
  if (b.reasoning_effort !== undefined) {
    return openaiError("Unsupported parameter: 'reasoning_effort' is not supported with this model.", 'invalid_request_error', 'reasoning_effort', 'unsupported_parameter');
  }
  for (const field of ['max_completion_tokens', 'max_tokens'] as const) {
    const v = b[field];
    if (typeof v === 'number' && v > 16_384) {
      return openaiError(`${field} is too large: ${v}. This model supports at most 16384 completion tokens, whereas you provided ${v}.`, 'invalid_request_error', field, 'invalid_value');
    }
  }
  return null;
}

async function chat(x: Exchange): Promise<void> {
  const body = x.body as ChatBody;
  if (typeof body !== 'object' || body === null) {
    return x.json(400, openaiError('We could not parse the JSON body of your request.', 'invalid_request_error'));
  }
  if (typeof body.model !== 'string') {
    return x.json(400, openaiError('you must provide a model parameter', 'invalid_request_error', 'model', 'missing_required_parameter'));
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return x.json(400, openaiError("Missing required parameter: 'messages'.", 'invalid_request_error', 'messages', 'missing_required_parameter'));
  }
  if (x.options.rejectStreamOptions && 'stream_options' in body) {
    return x.json(400, openaiError('Unrecognized request argument supplied: stream_options', 'invalid_request_error', 'stream_options'));
  }
  const refused = modelLimits(body) ?? reasoningNotBack(body, x.options);
  if (refused) return x.json(400, refused);
  const reply = runScenario({ ...toScenario(body), padToWords: x.options.longAnswers, forcedTool: x.options.toolCall });
  // `n` choices, each the same reply: the completion tokens count once per choice, as OpenAI bills them.
  const n = typeof body.n === 'number' && body.n > 1 ? Math.floor(body.n) : 1;
  const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  const callId = `call_${randomBytes(12).toString('hex')}`;
  if (body.stream === true) return x.sse(streamEvents(body, reply, x.options, { id, created, callId }, n));

  const message = reply.toolCall
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: callId, type: 'function', function: { name: reply.toolCall.name, arguments: reply.toolCall.argumentsJson } }],
        refusal: null,
        annotations: [],
      }
    : { role: 'assistant', content: reply.text, refusal: null, annotations: [] };
  if (x.options.reasoningContent !== undefined) Object.assign(message, { reasoning_content: x.options.reasoningContent });
  return x.json(200, {
    id,
    object: 'chat.completion',
    created,
    model: body.model,
    choices: Array.from({ length: n }, (_, index) => ({ index, message, logprobs: null, finish_reason: reply.finish })),
    ...(x.options.omitUsage ? {} : { usage: openaiUsage({ ...reply, completionTokens: reply.completionTokens * n }, x.options) }),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  });
}

function streamEvents(
  body: ChatBody,
  reply: ScenarioReply,
  options: FakeOptions,
  ids: { id: string; created: number; callId: string },
  n = 1,
): SseEvent[] {
  const base = { id: ids.id, object: 'chat.completion.chunk', created: ids.created, model: body.model, system_fingerprint: 'fp_fake' };
  const nullUsage = options.usageOnEveryChunk ? { usage: null } : {};
  const chunk = (delta: object, finish: string | null = null, extra: object = nullUsage) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });

  const events: string[] = [];
  if (options.reasoningContent !== undefined) events.push(chunk({ role: 'assistant', content: null, reasoning_content: options.reasoningContent }));
  const call = reply.toolCall;
  if (call) {
    // id, type and name only in the first delta for the index: helpers concatenate repeated strings.
    const first = { index: 0, id: ids.callId, type: 'function', function: { name: call.name, arguments: '' } };
    events.push(chunk({ role: 'assistant', content: null, tool_calls: [first], refusal: null }));
    for (const fragment of call.argumentFragments) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }));
    }
  } else {
    events.push(chunk({ role: 'assistant', content: '', refusal: null }));
    for (const piece of reply.pieces) events.push(chunk({ content: piece }));
    // Further choices (n > 1) stream after the first, each under its own index.
    for (let index = 1; index < n; index++) {
      for (const piece of reply.pieces) events.push(JSON.stringify({ ...base, choices: [{ index, delta: { content: piece }, logprobs: null, finish_reason: null }], ...nullUsage }));
    }
  }

  const wantsUsage = body.stream_options?.include_usage === true && !options.omitUsage;
  const usage = openaiUsage({ ...reply, completionTokens: reply.completionTokens * n }, options);
  if (wantsUsage && options.usageOnFinishChunk) {
    events.push(chunk({}, reply.finish, { usage }));
  } else {
    events.push(chunk({}, reply.finish));
    if (wantsUsage) events.push(JSON.stringify({ ...base, choices: [], usage }));
  }
  events.push('[DONE]');
  return events.map((data) => ({ data }));
}

// ---- models ----

function modelObject(id: string) {
  return { id, object: 'model', created: 1_700_000_000, owned_by: 'fake-openai' };
}

function listModels(x: Exchange): Promise<void> {
  return x.json(200, { object: 'list', data: x.options.models.map(modelObject) });
}

function retrieveModel(x: Exchange): Promise<void> {
  // SDKs percent-encode ids, so `org/model` arrives as `org%2Fmodel`.
  const id = decodeURIComponent(x.path.slice('/v1/models/'.length));
  if (!x.options.models.includes(id)) {
    return x.json(404, openaiError(`The model \`${id}\` does not exist or you do not have access to it.`, 'invalid_request_error', null, 'model_not_found'));
  }
  return x.json(200, modelObject(id));
}

// ---- embeddings ----

interface EmbeddingsBody {
  model?: unknown;
  input?: unknown;
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
}

/** Each input as [hash key, token count]: strings count words, token arrays count tokens. */
function embeddingInputs(input: unknown): [string, number][] | null {
  const one = (v: unknown): [string, number] | null => {
    if (typeof v === 'string' && v !== '') return [v, countWords(v)];
    if (Array.isArray(v) && v.length > 0 && v.every((n) => typeof n === 'number')) return [v.join(' '), v.length];
    return null;
  };
  const single = one(input);
  if (single) return [single];
  if (!Array.isArray(input) || input.length === 0) return null;
  const all = input.map(one);
  return all.every((v) => v !== null) ? (all as [string, number][]) : null;
}

function toBase64(vector: number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

async function embeddings(x: Exchange): Promise<void> {
  const body = x.body as EmbeddingsBody;
  if (typeof body !== 'object' || body === null || typeof body.model !== 'string') {
    return x.json(400, openaiError('you must provide a model parameter', 'invalid_request_error', 'model', 'missing_required_parameter'));
  }
  const inputs = embeddingInputs(body.input);
  if (!inputs) {
    return x.json(400, openaiError("'input' must be a non-empty string, array of strings or array of tokens.", 'invalid_request_error', 'input'));
  }
  const dims = body.dimensions ?? 8;
  const base64 = body.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, [, n]) => sum + n, 0);
  return x.json(200, {
    object: 'list',
    data: inputs.map(([key], index) => {
      const vector = fakeEmbedding(key, dims);
      return { object: 'embedding', index, embedding: base64 ? toBase64(vector) : vector };
    }),
    model: body.model,
    ...(x.options.omitUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  });
}
