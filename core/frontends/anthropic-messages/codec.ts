/** The Anthropic front end's codec per candidate: pass-through to an Anthropic upstream, translation to the rest. */
import type { CallRequest } from '../../pipeline/call-model.ts';
import type { UpstreamCodec } from '../../pipeline/codec.ts';
import { neutralCodec } from '../../pipeline/codec.ts';
import type { Candidate } from '../../gateway/model-router.ts';
import { AnthropicPassthroughDecoder, anthropicPassthroughRequest } from '../../providers/anthropic/passthrough.ts';
import { fromAnthropicUsage } from '../../providers/anthropic/usage.ts';
import type { AnthropicUsage } from '../../providers/anthropic/wire.ts';
import { spliceUsageCost } from '../cost-splice.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function anthropicPassthroughCodec(req: CallRequest, bodyText?: string): UpstreamCodec {
  return {
    request: (ctx) => anthropicPassthroughRequest(req.raw, req.forwardHeaders, bodyText === undefined ? ctx : { ...ctx, bodyText }),
    decode(json, text) {
      const body = isObj(json) ? json : {};
      const blocks = Array.isArray(body.content) ? body.content.filter(isObj) : [];
      return {
        kind: 'native',
        usage: isObj(body.usage) ? fromAnthropicUsage(body.usage as AnthropicUsage) : null,
        text: blocks.map((b) => (typeof b.text === 'string' ? b.text : b.type === 'tool_use' ? `${String(b.name)}${JSON.stringify(b.input ?? {})}` : '')).join(''),
        // The body goes back as Anthropic sent it, with `cost` added to its `usage` (as chat's does).
        render: (end) => (end.costUsd !== null && isObj(body.usage) ? (spliceUsageCost(text, body.usage, end.costUsd) ?? text) : text),
      };
    },
    frames: () => new AnthropicPassthroughDecoder(),
  };
}

export const anthropicCodecFor = (req: CallRequest, bodyText?: string) => (c: Candidate): UpstreamCodec =>
  c.runtime.adapter.protocol === 'anthropic-messages' ? anthropicPassthroughCodec(req, bodyText) : neutralCodec(c, req);
