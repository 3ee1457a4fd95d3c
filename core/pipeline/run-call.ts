/**
 * The one path of a model call, whatever protocol the client speaks: admission (allow-list, model
 * resolution, rate limits, budget reservation), routing and failover until the first good answer, the
 * answer rendered by the client's front end (or relayed natively), cost, and what the audit row says.
 * The front end parses and renders; the codec of each candidate talks to its upstream.
 */
import { admit } from '../gateway/admission.ts';
import type { Admission } from '../gateway/admission.ts';
import type { Candidate } from '../gateway/model-router.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import type { Usage } from '../usage.ts';
import type { CallRequest } from './call-model.ts';
import type { UpstreamCodec } from './codec.ts';
import { neutralCodec } from './codec.ts';
import { completeCall } from './complete-call.ts';
import type { FrontEnd } from './front-end.ts';
import { streamCall } from './stream-call.ts';

export interface PipelineCall {
  frontEnd: FrontEnd;
  request: CallRequest;
  /** The codec for a candidate; default: the adapter's neutral codec. */
  codecFor?(c: Candidate): UpstreamCodec;
  /** The prompt's tokens, counted only when a budget needs them. */
  promptTokens(): number;
  /** The usage to record when the upstream reported none; `completionText` is what was answered. */
  estimate(completionText: string): Promise<Usage>;
  /** Narrows the admitted candidates (e.g. to those that serve the endpoint); may throw a client error. */
  narrow?(admission: Admission): Admission;
  /** The most output the call may produce, for the budget reservation (default: the request's `maxOutputTokens`). */
  maxOutputTokens?: number | null;
}

export async function runCall(ctx: RequestContext, call: PipelineCall): Promise<void> {
  const req = call.request;
  ctx.record.modelRequested = req.model;
  const admitted = admit(ctx, req.model, { inputTokens: call.promptTokens, maxOutputTokens: call.maxOutputTokens !== undefined ? call.maxOutputTokens : req.maxOutputTokens });
  try {
    const admission = call.narrow ? call.narrow(admitted) : admitted;
    const codecFor = call.codecFor ?? ((c: Candidate) => neutralCodec(c, req));
    if (req.stream) await streamCall(ctx, call, admission, codecFor);
    else await completeCall(ctx, call, admission, codecFor);
  } finally {
    // Whatever the outcome (even a client gone mid-stream), the key pays what the record says was used.
    admitted.settle(ctx.record.priced.costUsd);
  }
}
