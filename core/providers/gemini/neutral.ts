/**
 * Gemini's neutral codec rides on its chat translation: the call is encoded as an OpenAI chat body and
 * translated by `chatRequest`; answers come back as OpenAI shapes and are decoded from there. Gemini's
 * thought signatures travel inside the tool-call ids (tool-ids.ts), so they survive the round trip.
 */
import { openAIChatBodyFromCall } from '../openai/encode-call.ts';
import { decodeOpenAIResult, OpenAIFrameDecoder } from '../openai/decode-call.ts';
import { ToolNameMap } from '../tool-names.ts';
import type { Frame, FrameDecoder, NeutralCodec, SseEvent, StreamPiece, StreamTranslator } from '../types.ts';
import { chatRequest } from './request.ts';
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

export const geminiNeutralCodec: NeutralCodec = {
  encodeCall: (req, ctx) => chatRequest(openAIChatBodyFromCall(req, ctx, true) as ChatRequest, ctx),
  decodeCall: (json, ctx, req) => {
    const names = new ToolNameMap(req.tools.map((t) => t.name));
    return decodeOpenAIResult(chatResponse(json, ctx).body, (n) => names.down(n));
  },
  callFrames: (ctx, req) => {
    const names = new ToolNameMap(req.tools.map((t) => t.name));
    return new GeminiFrameDecoder(new GeminiStreamTranslator(ctx), new OpenAIFrameDecoder((n) => names.down(n)));
  },
};
