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

function runChat(ctx: RequestContext, request: CallRequest, body: ChatRequest, promptTokens: PromptCount): Promise<void> {
  return runCall(ctx, {
    frontEnd: openAIChatFrontEnd,
    request,
    codecFor: chatCodec(body, request.forwardHeaders, request, ctx.bodyText, ctx.bodyBytes),
    promptTokens,
    estimate: (text) => estimateUsage(promptTokens, text, body.messages.length),
  });
}
