/**
 * `POST /v1/completions` (legacy). The body passes through to OpenAI-protocol providers; a stream
 * goes through the call pipeline with chat's chunk renderer: chunks keep `object: "text_completion"`, usage is always
 * requested upstream and shown only when the client asked, errors after the first byte end the stream
 * with an error event.
 */
import { isPromise } from '../state/awaitable.ts';
import { badRequest, internalError } from '../errors.ts';
import { openAIChatBody } from '../providers/openai/request.ts';
import type { CallContext, PassthroughBody } from '../providers/types.ts';
import { toOpenAIUsage } from '../usage.ts';
import type { Usage } from '../usage.ts';
import { admit } from './admission.ts';
import { admissionCountsPrompt, countTokensExact, promptTokenCounter } from './estimate.ts';
import type { PromptCount } from './estimate.ts';
import { passthroughRequestFor, respondPassthrough, runPassthrough, servingCandidates, tokenUsage } from './passthrough.ts';
import type { RequestContext } from './request-context.ts';
import { completionRequestSchema } from './schemas/completions.ts';
import type { CompletionRequest } from './schemas/completions.ts';
import { parseRequest } from './schemas/common.ts';
import { runCall } from '../pipeline/run-call.ts';
import type { CallRequest } from '../pipeline/call-model.ts';
import type { FrontEnd } from '../pipeline/front-end.ts';
import { ChatStreamRenderer, openAIErrorResponse } from '../frontends/openai-chat/front-end.ts';
import { chunkCodec } from '../frontends/openai-chat/codec.ts';

const isTokenArray = (v: unknown): boolean => Array.isArray(v) && v.every((t) => Number.isInteger(t));

export type { CompletionRequest };

export function validateCompletionRequest(body: Record<string, unknown>): CompletionRequest {
  if (!('model' in body) || body.model === null || body.model === '') {
    throw badRequest('You must provide a model parameter.', 'missing_parameter', 'model');
  }
  const parsed = parseRequest(completionRequestSchema, body);
  if (parsed.stream_options != null && parsed.stream !== true) {
    throw badRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'invalid_value', 'stream_options');
  }
  return parsed;
}

/** A prompt's texts and its tokens given as token arrays (those are already tokens). */
function promptParts(prompt: unknown): { texts: string[]; tokens: number } {
  if (typeof prompt === 'string') return { texts: [prompt], tokens: 0 };
  if (!Array.isArray(prompt)) return { texts: [], tokens: 0 };
  if (isTokenArray(prompt)) return { texts: [], tokens: prompt.length };
  const texts = prompt.filter((x): x is string => typeof x === 'string');
  return { texts, tokens: prompt.reduce((n: number, x: unknown) => n + (Array.isArray(x) ? x.length : 0), 0) };
}

/** Prompt tokens for admission (see promptTokenCounter): counted lazily here, or ahead on the tokenizer worker when huge. */
async function promptTokens(prompt: unknown, needed: boolean): Promise<PromptCount> {
  const { texts, tokens } = promptParts(prompt);
  const counter = await promptTokenCounter(texts, needed);
  // An object, not a closure with `exact` attached (see PromptCount).
  return { now: () => counter.now() + tokens, exact: async () => (await counter.exact()) + tokens };
}

async function estimate(prompt: PromptCount, completionText: string): Promise<Usage> {
  const [input, output] = await Promise.all([prompt.exact(), countTokensExact(completionText)]);
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    estimated: true,
  };
}

const clientWantsUsage = (body: CompletionRequest): boolean =>
  !!(body.stream_options && typeof body.stream_options === 'object' && (body.stream_options as { include_usage?: unknown }).include_usage === true);

/** The body for one provider: the chat field rules (model, `user` dropped, usage always asked for in streams). */
function completionBody(body: CompletionRequest, callCtx: CallContext): PassthroughBody {
  return {
    contentType: 'application/json',
    build: (wireModel) => JSON.stringify({ ...openAIChatBody(body, callCtx), model: wireModel }),
  };
}

/** Legacy completions stream like chat (same chunk relay, usage chunk and `[DONE]`); their bodies are never translated. */
const completionsFrontEnd: FrontEnd = {
  protocol: 'openai-completions',
  parse: () => {
    throw internalError('legacy completions are parsed by their handler');
  },
  render: () => {
    throw internalError('legacy completions answer natively');
  },
  stream: (req, meta) => new ChatStreamRenderer(meta.model, req.streamUsage, 'text_completion'),
  error: (err) => openAIErrorResponse(err),
};

function completionCall(body: CompletionRequest, maxOutputTokens: number | null, n: number): CallRequest {
  return {
    inbound: 'openai-completions',
    model: body.model,
    system: [],
    messages: [],
    tools: [],
    maxOutputTokens,
    n,
    stream: true,
    streamUsage: clientWantsUsage(body),
    extra: {},
    forwardHeaders: {},
    raw: body,
  };
}

export async function handleCompletions(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const body = validateCompletionRequest(raw);
  ctx.record.modelRequested = body.model;
  // OpenAI's default max_tokens for completions is 16, but OpenAI-compatible servers (vLLM, Ollama)
  // default to the model's limit: without max_tokens the worst case is the model's limit.
  const maxTokens = typeof body.max_tokens === 'number' && body.max_tokens > 0 ? body.max_tokens : null;
  // best_of generates (and bills) that many completions server-side, returning n of them.
  const n = Math.max(typeof body.n === 'number' && body.n > 0 ? body.n : 1, typeof body.best_of === 'number' && body.best_of > 0 ? body.best_of : 1);
  const prompts = Array.isArray(body.prompt) && !isTokenArray(body.prompt) ? body.prompt.length : 1;
  const promptCount = await promptTokens(body.prompt, admissionCountsPrompt(ctx.key));
  if (body.stream === true) {
    await runCall(ctx, {
      frontEnd: completionsFrontEnd,
      request: completionCall(body, maxTokens, n * prompts),
      promptTokens: promptCount,
      estimate: (text) => estimate(promptCount, text),
      narrow: (admission) => servingCandidates(admission, '/completions', body.model),
      codecFor: (c) => chunkCodec(c, (callCtx) => passthroughRequestFor(c, '/completions', completionBody(body, callCtx), callCtx), completionText),
    });
    return;
  }
  let admission = admit(ctx, body.model, { inputTokens: promptCount, maxOutputTokens: maxTokens, n: n * prompts });
  if (isPromise(admission)) admission = await admission;
  try {
    const serving = servingCandidates(admission, '/completions', body.model);
    const success = await runPassthrough(ctx, serving, { path: '/completions', stream: false, jsonOnly: true, body: (callCtx) => completionBody(body, callCtx) });
    let usage: Usage | null = null;
    if (success.value.kind === 'json') {
      const json = success.value.json;
      usage = tokenUsage(json.usage);
      if (!usage) {
        usage = await estimate(promptCount, completionText(json));
        json.usage = toOpenAIUsage(usage);
      }
    }
    respondPassthrough(ctx, success, usage);
  } finally {
    // Whatever the outcome (even a client gone mid-stream), the key pays what the record says was used.
    admission.settle(ctx.record.priced.costUsd);
  }
}

function completionText(body: Record<string, unknown>): string {
  if (!Array.isArray(body.choices)) return '';
  let out = '';
  for (const c of body.choices) {
    const text = (c as { text?: unknown })?.text;
    if (typeof text === 'string') out += text;
  }
  return out;
}
