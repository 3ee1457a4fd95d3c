/**
 * Chat's codec for every upstream: the adapter's own chat translation (OpenAI-protocol upstreams get
 * the client's body with only the gateway's rewrites; Anthropic and Gemini are translated from it), and
 * chunks relayed nearly as the upstream sent them, `usage` lifted out so the gateway alone places it.
 */
import { toOpenAIUsage } from '../../usage.ts';
import type { Usage } from '../../usage.ts';
import { stringifyWithCost } from '../../pricing/cost.ts';
import { spliceUsageCost } from '../cost-splice.ts';
import type { UpstreamCodec } from '../../pipeline/codec.ts';
import { neutralCodec } from '../../pipeline/codec.ts';
import type { CallRequest } from '../../pipeline/call-model.ts';
import type { Candidate } from '../../gateway/model-router.ts';
import type { CallContext, Frame, FrameDecoder, SseEvent, StreamPiece, StreamTranslator, UpstreamRequest } from '../../providers/types.ts';
import type { ChatRequest } from '../../providers/types.ts';

class ChunkFrames implements FrameDecoder {
  private readonly translator: StreamTranslator;

  constructor(translator: StreamTranslator) {
    this.translator = translator;
  }

  usageSoFar(): Usage | null {
    return this.translator.usageSoFar?.() ?? null;
  }

  push(ev: SseEvent): Frame[] {
    return this.translator.push(ev).map(toFrame);
  }

  finish(): Frame[] {
    return this.translator.finish().map(toFrame);
  }
}

function toFrame(p: StreamPiece): Frame {
  switch (p.kind) {
    case 'chunk':
      return { kind: 'raw', data: p.json, text: p.text, good: true };
    case 'usage':
      return { kind: 'usage', usage: p.usage, raw: p.chunk, ...(p.text === undefined ? {} : { rawText: p.text }) };
    case 'error':
      return { kind: 'error', failure: p.failure };
    case 'end':
      return { kind: 'end' };
  }
}

/**
 * A codec over OpenAI-shaped bodies: `request` builds the upstream request (chat, or legacy completions);
 * `answer` is what the adapter's translation of the answer must also know of the call.
 */
export function chunkCodec(c: Candidate, request: (ctx: CallContext) => UpstreamRequest, completionText: (body: Record<string, unknown>) => string, answer?: Pick<CallContext, 'oneToolCall'>): UpstreamCodec {
  const adapter = c.runtime.adapter;
  const answering = (ctx: CallContext): CallContext => (answer ? { ...ctx, ...answer } : ctx);
  return {
    request,
    decode(json, text, ctx) {
      const result = adapter.chatResponse(json, answering(ctx));
      return {
        kind: 'native',
        usage: result.usage,
        text: completionText(result.body),
        ...(typeof result.body.service_tier === 'string' ? { serviceTier: result.body.service_tier } : {}),
        render(end) {
          const body = result.body;
          // Unpriced, with usage of its own (or none to add): the upstream's text goes out as it came.
          if (body === json && end.costUsd === null && (result.usage || !end.usage)) return text;
          if (!result.usage && end.usage) body.usage = toOpenAIUsage(end.usage);
          const u = body.usage && typeof body.usage === 'object' ? (body.usage as Record<string, unknown>) : null;
          // The upstream's body unchanged by the adapter: its own text goes out, with `cost` spliced into `usage`.
          if (body === json && result.usage && u && end.costUsd !== null) {
            const spliced = spliceUsageCost(text, u, end.costUsd);
            if (spliced !== null) return spliced;
          }
          return stringifyWithCost(body, u, end.costUsd);
        },
      };
    },
    frames: (ctx) => new ChunkFrames(adapter.chatStream(answering(ctx))),
  };
}

const ONE_TOOL_CALL = { oneToolCall: true } as const;

export const chatCodec = (body: ChatRequest, forwardHeaders: Record<string, string>, req?: CallRequest, bodyText?: string, bodyBytes?: Uint8Array) => (c: Candidate): UpstreamCodec =>
  req && c.runtime.adapter.protocol === 'anthropic-messages'
    ? neutralCodec(c, req)
    : chunkCodec(c, (ctx) => c.runtime.adapter.chatRequest(body, { ...ctx, forwardHeaders, bodyText, bodyBytes }), chatCompletionText, body.parallel_tool_calls === false ? ONE_TOOL_CALL : undefined);

export function chatCompletionText(body: Record<string, unknown>): string {
  const choices = body.choices;
  if (!Array.isArray(choices)) return '';
  let out = '';
  for (const c of choices) {
    const msg = (c as { message?: { content?: unknown; tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }> } })?.message;
    if (typeof msg?.content === 'string') out += msg.content;
    for (const t of msg?.tool_calls ?? []) out += `${String(t.function?.name ?? '')}${String(t.function?.arguments ?? '')}`;
  }
  return out;
}
