/** Neutral answers → Anthropic's message object, stop reasons and usage (input excludes cache reads and writes). */
import { randomBytes } from 'node:crypto';
import type { CallResult, FinishReason } from '../../pipeline/call-model.ts';
import type { ResponseMeta, StreamEnd } from '../../pipeline/front-end.ts';
import type { Usage } from '../../usage.ts';
import { stringifyWithCost } from '../../pricing/cost.ts';
import { encodeToolId } from '../opaque.ts';

const STOP_REASONS = new Set(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);
const BY_UNIFIED: Record<FinishReason['unified'], string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  'tool-calls': 'tool_use',
  'content-filter': 'refusal',
  pause: 'pause_turn',
  error: 'end_turn',
  other: 'end_turn',
};

export function stopReason(f: FinishReason | null): string {
  if (f === null) return 'end_turn';
  if (f.raw !== null && STOP_REASONS.has(f.raw)) return f.raw;
  return BY_UNIFIED[f.unified];
}

export function anthropicUsage(u: Usage | null): Record<string, number> {
  if (!u) return { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  return {
    input_tokens: Math.max(0, u.inputTokens - u.cacheReadTokens - u.cacheWriteTokens),
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cacheReadTokens,
    output_tokens: u.outputTokens,
  };
}

/**
 * The signature the gateway puts on reasoning another provider produced (`gw1:` prefix): it tells the
 * block apart from Anthropic's signed thinking when a client sends it back.
 */
export const GATEWAY_SIGNATURE = 'gw1:reasoning';

export const messageId = (id: string): string => (id.startsWith('msg_') ? id : `msg_${randomBytes(12).toString('hex')}`);

function input(args: string): unknown {
  try {
    const v: unknown = args.trim() === '' ? {} : JSON.parse(args);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    // Models do emit truncated JSON; the client still gets the call.
    return {};
  }
}

export function renderMessage(result: CallResult, meta: ResponseMeta, end: StreamEnd): string {
  const choice = result.choices[0];
  const content: Array<Record<string, unknown>> = [];
  for (const p of choice?.content ?? []) {
    if (p.type === 'reasoning') {
      if (p.redacted) {
        if (p.opaque?.origin === 'anthropic') content.push({ type: 'redacted_thinking', data: p.opaque.value });
      } else content.push({ type: 'thinking', thinking: p.text, signature: p.opaque?.origin === 'anthropic' ? p.opaque.value : GATEWAY_SIGNATURE });
    } else if (p.type === 'text') content.push({ type: 'text', text: p.text });
    else if (p.type === 'tool-call') content.push({ type: 'tool_use', id: encodeToolId(p.id, p.opaque), name: p.name, input: input(p.arguments) });
  }
  const usage: Record<string, unknown> = anthropicUsage(end.usage ?? result.usage);
  // `usage.cost` as every front end gives it (a plain decimal); Anthropic's SDKs keep fields they do not know.
  return stringifyWithCost(
    { id: messageId(result.id), type: 'message', role: 'assistant', model: meta.requestedModel, content, stop_reason: stopReason(choice?.finish ?? null), stop_sequence: null, usage },
    usage,
    end.costUsd,
  );
}
