/**
 * The OpenAI chat completions front end. Streams end with the usage chunk (only when the client asked
 * for it, with `usage.cost`) and `data: [DONE]`; an error after the first byte ends the stream with
 * `data: {"error":...}` and no `[DONE]`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors.ts';
import { toOpenAIUsage } from '../../usage.ts';
import { stringifyWithCost } from '../../pricing/cost.ts';
import type { CallRequest } from '../../pipeline/call-model.ts';
import type { FrontEnd, ResponseMeta, StreamEnd, StreamRenderer } from '../../pipeline/front-end.ts';
import type { ChatRequest } from '../../providers/types.ts';
import { validateChatRequest } from '../../gateway/chat-validate.ts';
import { parseChatRequest } from './parse.ts';
import { spliceUsageCost } from '../cost-splice.ts';
import { ChatChunkWriter, renderChatCompletion } from './render.ts';

export function openAIErrorResponse(err: GatewayError): { status: number; headers: Record<string, string>; body: string } {
  return { status: err.status, headers: err.responseHeaders(), body: JSON.stringify(err.toBody()) };
}

/** The chat stream renderer; native chunks (OpenAI-shaped, from any adapter's chat translator) pass through as they are. */
export class ChatStreamRenderer implements StreamRenderer {
  private readonly writer: ChatChunkWriter;
  private readonly wantsUsage: boolean;
  private firstChunk: string | null = null;
  private readonly object: string;

  constructor(model: string, wantsUsage: boolean, object = 'chat.completion.chunk') {
    this.writer = new ChatChunkWriter(model);
    this.wantsUsage = wantsUsage;
    this.object = object;
  }

  event(e: Parameters<StreamRenderer['event']>[0]): string {
    return this.writer.event(e);
  }

  raw(data: string): string {
    if (this.firstChunk === null) this.firstChunk = data;
    return `data: ${data}\n\n`;
  }

  end(info: StreamEnd): string {
    if (!this.wantsUsage) return 'data: [DONE]\n\n';
    const upstream = info.upstreamUsage;
    // The upstream's own usage chunk, its counts kept: it goes out as written, `cost` added to its `usage`.
    const reported = upstream?.usage;
    if (info.upstreamUsageText !== undefined && reported !== null && typeof reported === 'object' && !info.estimated && info.usage && info.costUsd !== null) {
      const spliced = spliceUsageCost(info.upstreamUsageText, reported as Record<string, unknown>, info.costUsd);
      if (spliced !== null) return `data: ${spliced}\n\ndata: [DONE]\n\n`;
    }
    const chunk: Record<string, unknown> = upstream ? { ...upstream } : { ...this.template(), choices: [] };
    const u = upstream && !info.estimated && info.usage ? { ...(upstream.usage as Record<string, unknown>) } : info.usage ? toOpenAIUsage(info.usage) : {};
    chunk.usage = u;
    return `data: ${stringifyWithCost(chunk, u, info.costUsd)}\n\ndata: [DONE]\n\n`;
  }

  error(err: GatewayError): string {
    return `data: ${JSON.stringify({ error: { message: err.message, type: 'api_error', param: null, code: err.code } })}\n\n`;
  }

  keepAlive(): string | null {
    return null;
  }

  /** id/object/created/model of this stream, for a usage chunk the gateway builds itself. */
  private template(): Record<string, unknown> {
    if (this.firstChunk === null) return this.writer.template();
    try {
      const c = JSON.parse(this.firstChunk) as Record<string, unknown>;
      return { id: c.id, object: c.object ?? this.object, created: c.created, model: c.model };
    } catch {
      return { object: this.object };
    }
  }
}

export const openAIChatFrontEnd: FrontEnd = {
  protocol: 'openai-chat',
  parse(body: Record<string, unknown>, headers: IncomingHttpHeaders): CallRequest {
    return parseChatRequest(validateChatRequest(body), headers);
  },
  render: (result, meta, end) => renderChatCompletion(result, meta, end),
  stream: (req: CallRequest, meta: ResponseMeta) => new ChatStreamRenderer(meta.model, req.streamUsage),
  error: (err) => openAIErrorResponse(err),
};

export type { ChatRequest };
