/**
 * `POST /v1/responses` on the call pipeline. OpenAI and Azure candidates get the native pass-through;
 * every other upstream is bridged through the neutral model with its adapter's codec. What a bridge
 * cannot honour (`previous_response_id`, a forced built-in tool) narrows the call to native candidates,
 * or is refused with a 400 naming the field; built-in tools are dropped for bridged upstreams and the
 * answer says so in `x-gateway-dropped-tools`.
 */
import { isPromise } from '../../state/awaitable.ts';
import type { GatewayError } from '../../errors.ts';
import { admissionCountsPrompt, estimateUsage, promptTokenCounter } from '../../gateway/estimate.ts';
import type { Candidate } from '../../gateway/model-router.ts';
import type { RequestContext } from '../../gateway/request-context.ts';
import { neutralCodec } from '../../pipeline/codec.ts';
import { callPromptText } from '../../pipeline/prompt-text.ts';
import { runCall } from '../../pipeline/run-call.ts';
import { servesResponsesNatively } from '../../providers/responses-native.ts';
import { bridgeLimits, responsesFrontEnd, responsesFrontEndFor } from './index.ts';
import { nativeResponsesCodec } from './native-codec.ts';


const isNative = (c: Candidate): boolean => servesResponsesNatively(c.runtime.settings.type);

export async function handleResponses(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const request = responsesFrontEnd.parse(raw, ctx.req.headers);
  let dropped: string[] = [];
  let refusal: GatewayError | null = null;
  try {
    dropped = bridgeLimits(raw).droppedTools;
  } catch (err) {
    refusal = err as GatewayError;
  }
  const headers: Record<string, string> = {};
  const counted = promptTokenCounter(() => callPromptText(request), admissionCountsPrompt(ctx.key));
  const promptTokens = isPromise(counted) ? await counted : counted;
  await runCall(ctx, {
    frontEnd: responsesFrontEndFor(request, headers),
    request,
    codecFor: (c) => (isNative(c) ? nativeResponsesCodec(raw) : neutralCodec(c, request)),
    promptTokens,
    estimate: (text) => estimateUsage(promptTokens, text, request.messages.length + 1),
    narrow(admission) {
      if (refusal) {
        const native = admission.candidates.filter(isNative);
        if (native.length === 0) throw refusal;
        return native.length === admission.candidates.length ? admission : { ...admission, candidates: native };
      }
      if (dropped.length > 0 && !admission.candidates.every(isNative)) headers['x-gateway-dropped-tools'] = dropped.join(',');
      return admission;
    },
  });
}
