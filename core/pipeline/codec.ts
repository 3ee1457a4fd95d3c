/**
 * How one attempt talks to one candidate: the upstream request, and how its answer and its stream
 * frames are read. A front end picks a codec per candidate: the adapter's neutral codec (translation
 * through the call model), or a native one when the upstream speaks the client's protocol.
 */
import type { CallContext, FrameDecoder, UpstreamRequest } from '../providers/types.ts';
import type { Usage } from '../usage.ts';
import type { Candidate } from '../gateway/model-router.ts';
import type { CallRequest, CallResult } from './call-model.ts';
import type { StreamEnd } from './front-end.ts';

/** A non-stream answer: neutral (rendered by the front end) or native (its body, rendered with the cost). */
export type Answer =
  | { kind: 'result'; result: CallResult }
  | {
      kind: 'native';
      usage: Usage | null;
      /** The answer's visible text, for an estimate when the upstream gave no usage. */
      text: string;
      /** The `service_tier` the upstream says it served (priced differently by some providers). */
      serviceTier?: string;
      /** The body to send; `end` has the final usage (estimated when the upstream gave none) and cost. */
      render(end: StreamEnd): string;
    };

export interface UpstreamCodec {
  request(ctx: CallContext): UpstreamRequest;
  /** Reads a JSON success body; throws when it is unreadable (the provider's failure). */
  decode(json: unknown, text: string, ctx: CallContext): Answer;
  frames(ctx: CallContext): FrameDecoder;
}

/** Translation through the call model, with the candidate's adapter. */
export function neutralCodec(c: Candidate, req: CallRequest): UpstreamCodec {
  const n = c.runtime.adapter.neutral;
  return {
    request: (ctx) => n.encodeCall(req, ctx),
    decode: (json, _text, ctx) => ({ kind: 'result', result: n.decodeCall(json, ctx, req) }),
    frames: (ctx) => n.callFrames(ctx, req),
  };
}

/** The visible text of a neutral answer (for estimates): text, reasoning, tool names and arguments. */
export function resultText(result: CallResult): string {
  let out = '';
  for (const ch of result.choices) {
    for (const p of ch.content) {
      if (p.type === 'text' || p.type === 'reasoning') out += p.text;
      else if (p.type === 'tool-call') out += `${p.name}${p.arguments}`;
    }
  }
  return out;
}
