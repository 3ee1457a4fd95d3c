/** The neutral codec of OpenAI-protocol upstreams; `target` says where the body goes (Azure differs). */
import { joinUrl } from '../base-url.ts';
import { ToolNameMap } from '../tool-names.ts';
import type { CallRequest } from '../../pipeline/call-model.ts';
import type { CallContext, NeutralCodec, UpstreamRequest } from '../types.ts';
import { decodeOpenAIResult, OpenAIFrameDecoder } from './decode-call.ts';
import { openAIChatBodyFromCall } from './encode-call.ts';
import { openAIHeaders } from './request.ts';

const names = (req: CallRequest): ToolNameMap => new ToolNameMap(req.tools.map((t) => t.name));

export function openAINeutralCodec(
  target: (body: Record<string, unknown>, ctx: CallContext) => UpstreamRequest = (body, ctx) => ({
    method: 'POST',
    url: joinUrl(ctx.provider.baseUrl, '/chat/completions'),
    headers: openAIHeaders(ctx.apiKey),
    body: JSON.stringify(body),
  }),
): NeutralCodec {
  return {
    encodeCall: (req, ctx) => target(openAIChatBodyFromCall(req, ctx), ctx),
    decodeCall: (json, _ctx, req) => decodeOpenAIResult(json, (n) => names(req).down(n)),
    callFrames: (_ctx, req) => {
      const map = names(req);
      return new OpenAIFrameDecoder((n) => map.down(n));
    },
  };
}
