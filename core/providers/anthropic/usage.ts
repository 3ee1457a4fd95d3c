import type { Usage } from '../../usage.ts';
import type { AnthropicUsage } from './wire.ts';

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * Anthropic's `input_tokens` excludes cache reads and writes, while our `inputTokens` follows OpenAI
 * and includes them; adding them back keeps cost maths and `prompt_tokens` honest.
 */
export function fromAnthropicUsage(u: AnthropicUsage | null | undefined): Usage {
  const cacheRead = count(u?.cache_read_input_tokens);
  const cacheWrite = count(u?.cache_creation_input_tokens);
  const output = count(u?.output_tokens);
  const out: Usage = {
    inputTokens: count(u?.input_tokens) + cacheRead + cacheWrite,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    // Thinking is billed inside `output_tokens`; only newer API versions say how much of it there was.
    reasoningTokens: Math.min(count(u?.output_tokens_details?.thinking_tokens), output),
    estimated: false,
  };
  // 1-hour cache writes cost more than 5-minute ones (2x vs 1.25x the input rate).
  const write1h = Math.min(count(u?.cache_creation?.ephemeral_1h_input_tokens), cacheWrite);
  if (write1h > 0) out.cacheWrite1hTokens = write1h;
  if (typeof u?.service_tier === 'string' && u.service_tier !== 'standard') out.serviceTier = u.service_tier;
  return out;
}

/**
 * Folds a later usage report into an earlier one. Stream reports are cumulative, so a present
 * number replaces the old one; a missing or null one (older API versions send only
 * `output_tokens` in `message_delta`) keeps it.
 */
export function mergeAnthropicUsage(prev: AnthropicUsage, next: AnthropicUsage | null | undefined): AnthropicUsage {
  if (!next) return prev;
  const pick = (a: number | null | undefined, b: number | null | undefined): number | null | undefined =>
    typeof b === 'number' ? b : a;
  return {
    input_tokens: pick(prev.input_tokens, next.input_tokens),
    output_tokens: pick(prev.output_tokens, next.output_tokens),
    cache_creation_input_tokens: pick(prev.cache_creation_input_tokens, next.cache_creation_input_tokens),
    cache_read_input_tokens: pick(prev.cache_read_input_tokens, next.cache_read_input_tokens),
    output_tokens_details: next.output_tokens_details ?? prev.output_tokens_details,
    cache_creation: next.cache_creation ?? prev.cache_creation,
    service_tier: next.service_tier ?? prev.service_tier,
  };
}

/** The usage a stream has reported so far (`message_start`, then each `message_delta`), folded as it comes. */
export class AnthropicUsageTally {
  private usage: AnthropicUsage = {};
  private saw = false;

  /** Folds in an event's `usage`, when it is an object. */
  add(u: unknown): void {
    if (u === null || typeof u !== 'object' || Array.isArray(u)) return;
    this.usage = mergeAnthropicUsage(this.usage, u as AnthropicUsage);
    this.saw = true;
  }

  /** The usage so far, or null when no event carried any. */
  current(): Usage | null {
    return this.saw ? fromAnthropicUsage(this.usage) : null;
  }
}
