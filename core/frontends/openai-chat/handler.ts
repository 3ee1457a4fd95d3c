/** `POST /v1/chat/completions`: the chat front end on the call pipeline. */
import { isPromise } from '../../state/awaitable.ts';
import type { RequestContext } from '../../gateway/request-context.ts';
import { admissionCountsPrompt, chatPromptText, estimateUsage, promptTokenCounter } from '../../gateway/estimate.ts';
import type { PromptCount } from '../../gateway/estimate.ts';
import type { CallRequest } from '../../pipeline/call-model.ts';
import { runCall } from '../../pipeline/run-call.ts';
import type { ChatRequest } from '../../providers/types.ts';
import { chatCodec } from './codec.ts';
import { openAIChatFrontEnd } from './front-end.ts';

/** May throw before it returns a promise (a request the front end refuses): its caller awaits it in a `try`. */
export function handleChat(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const request = openAIChatFrontEnd.parse(raw, ctx.req.headers);
  const body = request.raw as ChatRequest;
  const counted = promptTokenCounter(() => chatPromptText(body), admissionCountsPrompt(ctx.key));
  // Without a budget the prompt is counted lazily: the call's promise is the pipeline's, no async layer around it.
  if (isPromise(counted)) return counted.then((promptTokens) => runChat(ctx, request, body, promptTokens));
  return runChat(ctx, request, body, counted);
}

/**
 * With both `max_tokens` and `max_completion_tokens`, both go upstream unchanged and an upstream may honour
 * either: the reservation takes the larger (the call's own cap, for a translation, stays the newer field).
 */
function reservedOutputCap(body: ChatRequest): number | undefined {
  const a = body.max_tokens;
  const b = body.max_completion_tokens;
  return typeof a === 'number' && typeof b === 'number' && a > 0 && b > 0 ? Math.max(a, b) : undefined;
}

function runChat(ctx: RequestContext, request: CallRequest, body: ChatRequest, promptTokens: PromptCount): Promise<void> {
  return runCall(ctx, {
    frontEnd: openAIChatFrontEnd,
    request,
    maxOutputTokens: reservedOutputCap(body),
    codecFor: chatCodec(body, request.forwardHeaders, request, ctx.bodyText, ctx.bodyBytes),
    promptTokens,
    estimate: (text) => estimateUsage(promptTokens, text, body.messages.length),
  });
}
