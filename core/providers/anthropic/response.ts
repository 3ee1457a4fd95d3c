import { randomUUID } from 'node:crypto';
import { toOpenAIUsage } from '../../usage.ts';
import type { CallContext, ChatResult } from '../types.ts';
import { toFinishReason } from './stop-reason.ts';
import { fromAnthropicUsage } from './usage.ts';
import type { AnthropicResponse, AnthropicUsage } from './wire.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** OpenAI ids start with `chatcmpl-`; keeping the message id after it lets a user find the call at Anthropic. */
export const completionId = (messageId: unknown): string =>
  `chatcmpl-${typeof messageId === 'string' && messageId !== '' ? messageId : randomUUID()}`;

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export function chatResponse(json: unknown, ctx: CallContext): ChatResult {
  const res = (isObj(json) ? json : {}) as Partial<AnthropicResponse>;
  const texts: string[] = [];
  const toolCalls: OpenAIToolCall[] = [];
  for (const block of Array.isArray(res.content) ? res.content : []) {
    if (!isObj(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: String(block.id),
        type: 'function',
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      });
    }
    // thinking / redacted_thinking / server-tool blocks: not part of an OpenAI message, and their
    // tokens are already counted in output_tokens.
  }

  const message: Obj = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const usage = isObj(res.usage) ? fromAnthropicUsage(res.usage as AnthropicUsage) : null;

  const body: Obj = {
    id: completionId(res.id),
    object: 'chat.completion',
    created: nowSeconds(),
    model: typeof res.model === 'string' ? res.model : ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: toFinishReason(res.stop_reason) }],
  };
  if (usage) body.usage = toOpenAIUsage(usage);
  return { body, usage };
}
