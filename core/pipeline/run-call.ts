/**
 * The one path of a model call, whatever protocol the client speaks: admission (allow-list, model
 * resolution, rate limits, budget reservation), routing and failover until the first good answer, the
 * answer rendered by the client's front end (or relayed natively), cost, and what the audit row says.
 * The front end parses and renders; the codec of each candidate talks to its upstream.
 */
import { isPromise } from '../state/awaitable.ts';
import { admit } from '../gateway/admission.ts';
import { ClientGone } from '../gateway/attempts.ts';
import type { Candidate } from '../gateway/model-router.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import { neutralCodec } from './codec.ts';
import { completeCall } from './complete-call.ts';
import { billCutAttempt } from './cut-attempt.ts';
import type { PipelineCall } from './pipeline-call.ts';
import { streamCall } from './stream-call.ts';

export type { PipelineCall } from './pipeline-call.ts';

export async function runCall(ctx: RequestContext, call: PipelineCall): Promise<void> {
  const req = call.request;
  ctx.record.modelRequested = req.model;
  const maxOutputTokens = call.maxOutputTokens !== undefined ? call.maxOutputTokens : req.maxOutputTokens;
  const n = call.n ?? req.n;
  ctx.record.outputCeiling = outputCeiling(maxOutputTokens, n);
  let admitted = admit(ctx, req.model, {
    inputTokens: call.promptTokens,
    maxOutputTokens,
    n,
    ...(req.serviceTier !== undefined ? { serviceTier: req.serviceTier } : {}),
  });
  if (isPromise(admitted)) admitted = await admitted;
  try {
    const admission = call.narrow ? call.narrow(admitted) : admitted;
    const codecFor = call.codecFor ?? ((c: Candidate) => neutralCodec(c, req));
    if (req.stream) await streamCall(ctx, call, admission, codecFor);
    else await completeCall(ctx, call, admission, codecFor);
  } catch (err) {
    // Gone while a provider had the call (before any answer, stream or not): its prompt is billed.
    if (err instanceof ClientGone && err.inFlight !== null) await billCutAttempt(ctx, call, err.inFlight);
    throw err;
  } finally {
    // Whatever the outcome (even a client gone mid-stream), the key pays what the record says was used.
    admitted.settle(ctx.record.priced.costUsd);
  }
}

/**
 * The most output a call that named its cap can truthfully report: the cap for each choice, and room for a
 * thinking budget some providers count beside it (Gemini's goes to 32,768). Above that, the count is an upstream's
 * bug and is clamped (the row marked estimated) rather than charged: one reply reporting 500 million tokens for
 * `max_tokens: 10` spent $1,000 of a $0.01 key. Null (no bound but the absolute one) when the call named no cap.
 */
function outputCeiling(maxOutputTokens: number | null, n: number | undefined): number | null {
  return maxOutputTokens === null ? null : maxOutputTokens * Math.max(1, n ?? 1) + 32_768;
}
