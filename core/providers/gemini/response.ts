/** Gemini `GenerateContentResponse` → OpenAI `chat.completion`. */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.ts';
import { toOpenAIUsage } from '../../usage.ts';
import type { CallContext, ChatResult } from '../types.ts';
import { toFinishReason } from './finish-reason.ts';
import { bareModel } from './request.ts';
import { toolCallFromPart, type OpenAIToolCall } from './tool-ids.ts';
import { fromGeminiUsage } from './usage.ts';
import type { GeminiCandidate, GeminiResponsePart, GenerateContentResponse } from './wire.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export function completionId(responseId: unknown): string {
  return `chatcmpl-${typeof responseId === 'string' && responseId !== '' ? responseId : randomBytes(12).toString('hex')}`;
}

export function responseModel(json: GenerateContentResponse, ctx: CallContext): string {
  return typeof json.modelVersion === 'string' && json.modelVersion !== '' ? json.modelVersion : bareModel(ctx.model);
}

/**
 * The answer text of a part, or null for parts that are not answer text: thoughts (`thought: true`),
 * signature-only parts, function calls, media. A signature riding on real text does not hide it.
 */
export function visibleText(part: GeminiResponsePart): string | null {
  if (!isObj(part) || part.thought === true || typeof part.text !== 'string' || part.text === '') return null;
  return part.text;
}

export const partsOf = (candidate: GeminiCandidate): GeminiResponsePart[] =>
  isObj(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];

/** Blocked prompts come back without candidates; the block reason is all there is. */
export const isPromptBlocked = (json: GenerateContentResponse): boolean =>
  isObj(json.promptFeedback) && typeof json.promptFeedback.blockReason === 'string';

/** proto3 JSON leaves out zero values, so a candidate without `index` is candidate 0. */
export const candidateIndex = (candidate: GeminiCandidate): number => (typeof candidate.index === 'number' ? candidate.index : 0);

/** `oneToolCall`: Gemini has no switch for parallel calls, so past the first they are dropped here. */
function toChoice(candidate: GeminiCandidate, oneToolCall: boolean): Obj {
  let text: string | null = null;
  const toolCalls: OpenAIToolCall[] = [];
  for (const part of partsOf(candidate)) {
    const t = visibleText(part);
    if (t !== null) text = (text ?? '') + t;
    const call = isObj(part) ? toolCallFromPart(part) : null;
    if (call && !(oneToolCall && toolCalls.length > 0)) toolCalls.push(call);
  }
  const message: Obj = { role: 'assistant', content: text, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    index: candidateIndex(candidate),
    message,
    logprobs: null,
    finish_reason: toFinishReason(candidate.finishReason, toolCalls.length > 0),
  };
}

export function chatResponse(raw: unknown, ctx: CallContext): ChatResult {
  if (!isObj(raw)) {
    throw new GatewayError({ status: 502, type: 'api_error', code: 'upstream_error', message: 'Gemini returned a response that is not a JSON object.' });
  }
  const json = raw as GenerateContentResponse;
  const candidates = Array.isArray(json.candidates) ? json.candidates.filter(isObj) : [];
  const choices =
    candidates.length > 0
      ? candidates.map((c) => toChoice(c, ctx.oneToolCall === true)).sort((a, b) => Number(a.index) - Number(b.index))
      : [
          {
            index: 0,
            message: { role: 'assistant', content: null, refusal: null },
            logprobs: null,
            finish_reason: isPromptBlocked(json) ? 'content_filter' : 'stop',
          },
        ];
  const usage = fromGeminiUsage(json.usageMetadata);
  const body: Obj = {
    id: completionId(json.responseId),
    object: 'chat.completion',
    created: nowSeconds(),
    model: responseModel(json, ctx),
    choices,
  };
  if (usage) body.usage = toOpenAIUsage(usage);
  return { body, usage };
}
