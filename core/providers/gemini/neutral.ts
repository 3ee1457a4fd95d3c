/**
 * Gemini's neutral codec rides on its chat translation: the call is encoded as an OpenAI chat body and
 * translated by `chatRequest`; answers come back as OpenAI shapes and are decoded from there. Gemini's
 * thought signatures travel inside the tool-call ids (tool-ids.ts), so they survive the round trip.
 */
import { openAIChatBodyFromCall } from '../openai/encode-call.ts';
import { decodeOpenAIResult, OpenAIFrameDecoder } from '../openai/decode-call.ts';
import { ToolNameMap } from '../tool-names.ts';
import type { CallContext, Frame, FrameDecoder, NeutralCodec, SseEvent, StreamPiece, StreamTranslator } from '../types.ts';
import { MAX_THINKING_BUDGET, THINKING_BUDGET, chatRequest } from './request.ts';
import type { GeminiThinkingConfig } from './wire.ts';
import type { CallRequest } from '../../pipeline/call-model.ts';
import { chatResponse } from './response.ts';
import { GeminiStreamTranslator } from './stream.ts';
import type { ChatRequest } from '../types.ts';
import type { Usage } from '../../usage.ts';

class GeminiFrameDecoder implements FrameDecoder {
  private readonly translator: StreamTranslator;
  private readonly chunks: OpenAIFrameDecoder;

  constructor(translator: StreamTranslator, chunks: OpenAIFrameDecoder) {
    this.translator = translator;
    this.chunks = chunks;
  }

  push(ev: SseEvent): Frame[] {
    return this.frames(this.translator.push(ev));
  }

  finish(): Frame[] {
    return this.frames(this.translator.finish());
  }

  usageSoFar(): Usage | null {
    return this.translator.usageSoFar?.() ?? null;
  }

  private frames(pieces: StreamPiece[]): Frame[] {
    const out: Frame[] = [];
    for (const p of pieces) {
      if (p.kind === 'chunk') out.push(...this.chunks.push({ event: null, data: p.json }));
      else if (p.kind === 'usage') out.push(...this.chunks.push({ event: null, data: JSON.stringify(p.chunk) }));
      else if (p.kind === 'error') out.push({ kind: 'error', failure: p.failure });
      else out.push(...this.chunks.push({ event: null, data: '[DONE]' }));
    }
    return out;
  }
}

/**
 * The thinking a Messages or Responses call asked for, as Gemini's budget: chat's translation reads only
 * `reasoning_effort`, which the neutral call has no place for. An Anthropic budget is kept (within the 24,576
 * every 2.5 model accepts); adaptive thinking is Gemini's dynamic budget (-1).
 */
function thinkingFor(req: CallRequest): GeminiThinkingConfig | undefined {
  const r = req.reasoning;
  if (!r) return undefined;
  if (typeof r.budgetTokens === 'number') return { thinkingBudget: Math.min(MAX_THINKING_BUDGET, Math.max(0, Math.round(r.budgetTokens))) };
  if (r.effort !== undefined && r.effort in THINKING_BUDGET) return { thinkingBudget: THINKING_BUDGET[r.effort] };
  return r.enabled ? { thinkingBudget: -1 } : undefined;
}

const withCall = (ctx: CallContext, req: CallRequest): CallContext => (req.parallelToolCalls === false ? { ...ctx, oneToolCall: true } : ctx);

export const geminiNeutralCodec: NeutralCodec = {
  encodeCall: (req, ctx) => chatRequest(openAIChatBodyFromCall(req, ctx, true) as ChatRequest, ctx, thinkingFor(req)),
  decodeCall: (json, ctx, req) => {
    const names = new ToolNameMap(req.tools.map((t) => t.name));
    return decodeOpenAIResult(chatResponse(json, withCall(ctx, req)).body, (n) => names.down(n));
  },
  callFrames: (ctx, req) => {
    const names = new ToolNameMap(req.tools.map((t) => t.name));
    return new GeminiFrameDecoder(new GeminiStreamTranslator(withCall(ctx, req)), new OpenAIFrameDecoder((n) => names.down(n)));
  },
};
