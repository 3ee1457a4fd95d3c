/** What a front end hands the pipeline for one call: its request, how to reach each candidate, how to estimate. */
import type { Admission } from '../gateway/admission.ts';
import type { Candidate } from '../gateway/model-router.ts';
import type { Usage } from '../usage.ts';
import type { CallRequest } from './call-model.ts';
import type { UpstreamCodec } from './codec.ts';
import type { FrontEnd } from './front-end.ts';

export interface PipelineCall {
  frontEnd: FrontEnd;
  request: CallRequest;
  /** The codec for a candidate; default: the adapter's neutral codec. */
  codecFor?(c: Candidate): UpstreamCodec;
  /** The prompt's tokens, counted only when a budget needs them. */
  promptTokens: { now(): number };
  /** The usage to record when the upstream reported none; `completionText` is what was answered. */
  estimate(completionText: string): Promise<Usage>;
  /** Narrows the admitted candidates (e.g. to those that serve the endpoint); may throw a client error. */
  narrow?(admission: Admission): Admission;
  /** The most output one choice may produce, for the budget reservation (default: the request's `maxOutputTokens`). */
  maxOutputTokens?: number | null;
  /** Choices the reservation counts (default: the request's `n`). */
  n?: number;
}
