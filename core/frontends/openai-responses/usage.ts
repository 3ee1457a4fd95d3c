/**
 * Usage in the Responses shape and back. Same semantics as the gateway's `Usage` (OpenAI's): input
 * includes cached tokens, output includes reasoning. Codex requires integer `input_tokens`,
 * `output_tokens` and `total_tokens`; the SDK types want both `*_details` objects.
 */
import type { Usage } from '../../usage.ts';

export function toResponsesUsage(u: Usage, costUsd: number | null = null): Record<string, unknown> {
  const input = Math.round(u.inputTokens);
  const output = Math.round(u.outputTokens);
  return {
    input_tokens: input,
    // Both members always: the SDKs' usage type requires them (inbound-protocols.md C.3).
    input_tokens_details: { cached_tokens: Math.round(u.cacheReadTokens), cache_write_tokens: Math.round(u.cacheWriteTokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: Math.round(u.reasoningTokens) },
    total_tokens: input + output,
    ...(costUsd !== null ? { cost: costUsd } : {}),
  };
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/** Reads a Responses `usage` object (from a response or `response.completed`); null when absent. */
export function fromResponsesUsage(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  if (typeof u.input_tokens !== 'number' && typeof u.output_tokens !== 'number') return null;
  const input = obj(u.input_tokens_details);
  const output = obj(u.output_tokens_details);
  return {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens),
    cacheReadTokens: num(input.cached_tokens),
    cacheWriteTokens: num(input.cache_write_tokens),
    reasoningTokens: num(output.reasoning_tokens),
    estimated: false,
  };
}
