/** Neutral answers → OpenAI chat shapes: the `chat.completion` body and `chat.completion.chunk`s. */
import { toOpenAIUsage } from '../../usage.ts';
import { stringifyWithCost } from '../../pricing/cost.ts';
import type { CallEvent, CallResult, FinishReason, OpaqueData } from '../../pipeline/call-model.ts';
import type { ResponseMeta, StreamEnd } from '../../pipeline/front-end.ts';

const FINISH: Record<FinishReason['unified'], string> = {
  stop: 'stop',
  length: 'length',
  'tool-calls': 'tool_calls',
  'content-filter': 'content_filter',
  pause: 'stop',
  error: 'stop',
  other: 'stop',
};

export const chatFinish = (f: FinishReason): string => FINISH[f.unified];

/** OpenAI ids start with `chatcmpl-`; keeping the upstream's id after it lets a user find the call there. */
const chatId = (id: string): string => (id.startsWith('chatcmpl-') ? id : `chatcmpl-${id}`);

export function renderChatCompletion(result: CallResult, meta: ResponseMeta, end: StreamEnd): string {
  const usage: Record<string, unknown> = toOpenAIUsage(end.usage ?? result.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: true });
  const body = {
    id: chatId(result.id),
    object: 'chat.completion',
    created: result.created,
    model: result.model || meta.model,
    choices: result.choices.map((c, index) => {
      const text = c.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
      const reasoning = c.content.flatMap((p) => (p.type === 'reasoning' && !p.redacted ? [p.text] : [])).join('');
      const calls = c.content.flatMap((p) => (p.type === 'tool-call' ? [{ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments }, ...thoughtSignature(p.opaque) }] : []));
      const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, refusal: null };
      if (reasoning !== '') message.reasoning_content = reasoning;
      if (calls.length > 0) message.tool_calls = calls;
      return { index, message, logprobs: null, finish_reason: chatFinish(c.finish) };
    }),
    usage,
  };
  return stringifyWithCost(body, usage, end.costUsd);
}

/** Gemini's thought signature goes to a chat client where Google's own OpenAI compatibility puts it. */
function thoughtSignature(opaque: OpaqueData | undefined): { extra_content?: { google: { thought_signature: string } } } {
  return opaque?.origin === 'gemini' ? { extra_content: { google: { thought_signature: opaque.value } } } : {};
}

/** Renders neutral events as chunks (for an upstream translated through the call model). */
export class ChatChunkWriter {
  private id = '';
  private created = Math.floor(Date.now() / 1000);
  private model: string;
  private readonly roleSent = new Set<number>();

  constructor(model: string) {
    this.model = model;
  }

  template(): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model };
  }

  event(e: CallEvent): string {
    switch (e.type) {
      case 'start':
        this.id = chatId(e.id);
        if (e.model) this.model = e.model;
        if (e.created) this.created = e.created;
        return this.chunk(0, { role: 'assistant', content: '' }, null);
      case 'text-delta':
        return this.chunk(e.choice, { content: e.text }, null);
      case 'reasoning-delta':
        return this.chunk(e.choice, { reasoning_content: e.text }, null);
      case 'tool-call-start':
        return this.chunk(e.choice, { tool_calls: [{ index: e.index, id: e.id, type: 'function', function: { name: e.name, arguments: '' }, ...thoughtSignature(e.opaque) }] }, null);
      case 'tool-call-delta':
        return this.chunk(e.choice, { tool_calls: [{ index: e.index, function: { arguments: e.argumentsDelta } }] }, null);
      case 'finish':
        return this.chunk(e.choice, {}, chatFinish(e.reason));
      default:
        return '';
    }
  }

  private chunk(choice: number, delta: Record<string, unknown>, finish: string | null): string {
    if (!this.roleSent.has(choice) && !('role' in delta)) delta = { role: 'assistant', ...delta };
    this.roleSent.add(choice);
    return `data: ${JSON.stringify({ ...this.template(), choices: [{ index: choice, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  }
}
