/**
 * A front end: one inbound protocol (OpenAI chat completions, Anthropic Messages, OpenAI Responses). It
 * parses the client's request into the neutral `CallRequest`, and renders answers, streams and errors in
 * its protocol's own shapes. It does no I/O and knows nothing of providers: the pipeline runs the call
 * and hands it `CallEvent`s.
 *
 * Shared between engineers: change it additively.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors.ts';
import type { Usage } from '../usage.ts';
import type { CallEvent, CallRequest, CallResult, WireProtocol } from './call-model.ts';

/** What the gateway knows about a served call when it renders the answer. */
export interface ResponseMeta {
  requestId: string;
  /** The model as the client asked for it. */
  requestedModel: string;
  /** The model id the provider served. */
  model: string;
  provider: string;
}

/** What is known when a stream ends. */
export interface StreamEnd {
  usage: Usage | null;
  /** The call's cost in USD, or null when unpriced. */
  costUsd: number | null;
  /** True when the usage was counted by the gateway, not reported by the provider. */
  estimated: boolean;
  /** A native pass-through's own usage object or chunk as the upstream sent it, when one came. */
  upstreamUsage?: Record<string, unknown>;
  /** That chunk's text as the upstream wrote it, when it can be relayed as written (OpenAI's own `choices: []` chunk). */
  upstreamUsageText?: string;
}

/** Turns a call's events into the protocol's SSE text, one event at a time. */
export interface StreamRenderer {
  /** The SSE text to write for this event ('' when it writes nothing). */
  event(e: CallEvent): string;
  /** The closing text after a complete answer (e.g. the usage chunk and `data: [DONE]`). */
  end(info: StreamEnd): string;
  /** The text that ends a stream that failed after its first byte. */
  error(err: GatewayError): string;
  /** Text to write during a long upstream silence so the client does not time out, or null for none. */
  keepAlive(): string | null;
  /**
   * Optional, for native pass-through: the text for one frame of the client's own protocol, relayed as
   * the upstream sent it (`event` is its SSE event name). Without it the frame is written as plain SSE.
   */
  raw?(data: string, event: string | undefined): string;
}

export interface FrontEnd {
  readonly protocol: WireProtocol;
  /** Parses and validates a request body; throws a `GatewayError` (400) naming the bad field. */
  parse(body: Record<string, unknown>, headers: IncomingHttpHeaders): CallRequest;
  /** A non-stream answer's JSON body (`cost` is spliced in by the caller where the protocol has room). */
  render(result: CallResult, meta: ResponseMeta, end: StreamEnd): string;
  /** A renderer for a streamed answer. */
  stream(req: CallRequest, meta: ResponseMeta): StreamRenderer;
  /** An error response in this protocol's envelope (status may differ: e.g. Anthropic 529 for overload). */
  error(err: GatewayError, requestId: string): { status: number; headers: Record<string, string>; body: string };
  /** Optional: headers every answer of this protocol carries (e.g. Anthropic's `request-id`). */
  headers?(requestId: string): Record<string, string>;
}
