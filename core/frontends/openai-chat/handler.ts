/** `POST /v1/chat/completions`: the chat front end on the call pipeline. */
import { isPromise } from '../../state/awaitable.ts';
import type { RequestContext } from '../../gateway/request-context.ts';
import { admissionCountsPrompt, chatPromptText, estimateUsage, promptTokenCounter } from '../../gateway/estimate.ts';
import { runCall } from '../../pipeline/run-call.ts';
import type { ChatRequest } from '../../providers/types.ts';
import { chatCodec } from './codec.ts';
import { openAIChatFrontEnd } from './front-end.ts';

export async function handleChat(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const request = openAIChatFrontEnd.parse(raw, ctx.req.headers);
  const body = request.raw as ChatRequest;
  const counted = promptTokenCounter(() => chatPromptText(body.messages), admissionCountsPrompt(ctx.key));
  const promptTokens = isPromise(counted) ? await counted : counted;
  await runCall(ctx, {
    frontEnd: openAIChatFrontEnd,
    request,
    codecFor: chatCodec(body, request.forwardHeaders, request, ctx.bodyText, ctx.bodyBytes),
    promptTokens,
    estimate: (text) => estimateUsage(promptTokens, text, body.messages.length),
  });
}
