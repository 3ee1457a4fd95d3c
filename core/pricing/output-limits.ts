/**
 * A model's own output limit, for the worst case of a call that names no `max_tokens`: the gateway
 * reserves that much output before forwarding. From the providers' model pages; the first matching
 * prefix wins. Unknown models get `DEFAULT_MAX_OUTPUT_TOKENS`, a conservative figure (most models
 * stop well before it, and a call that needs more can say `max_tokens`).
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768;

const LIMITS: ReadonlyArray<readonly [prefix: string, limit: number]> = [
  ['gpt-4o-mini-transcribe', 2_000],
  ['gpt-4o-transcribe', 2_000],
  ['gpt-4o-mini', 16_384],
  ['gpt-4o', 16_384],
  ['gpt-4.1', 32_768],
  ['gpt-4-turbo', 4_096],
  ['gpt-4', 8_192],
  ['gpt-3.5', 4_096],
  ['gpt-5', 128_000],
  ['o1-mini', 65_536],
  ['o1', 100_000],
  ['o3', 100_000],
  ['o4', 100_000],
  ['gpt-oss', 32_768],
  ['claude-3-5-haiku', 8_192],
  ['claude-3-5', 8_192],
  ['claude-3-7', 64_000],
  ['claude-3', 4_096],
  ['claude-opus-4-1', 32_000],
  ['claude-opus-4-0', 32_000],
  ['claude-opus-4', 64_000],
  ['claude-sonnet-4', 64_000],
  ['claude-haiku-4', 64_000],
  ['gemini-1.5', 8_192],
  ['gemini-2.0', 8_192],
  ['gemini-2.5', 65_536],
  ['gemini-3', 65_536],
  ['deepseek-chat', 8_192],
  ['deepseek-reasoner', 65_536],
  ['llama-3.1-8b', 8_192],
  ['demo-chat', 4_096],
];

/** `vendor/model` ids (OpenRouter) are looked up by the part after the slash too. */
export function modelOutputLimit(model: string): number {
  return knownOutputLimit(model) ?? DEFAULT_MAX_OUTPUT_TOKENS;
}

/** The model's published output limit, or null for a model not in the table. */
export function knownOutputLimit(model: string): number | null {
  const id = model.toLowerCase();
  const bare = id.includes('/') ? id.slice(id.lastIndexOf('/') + 1) : id;
  for (const [prefix, limit] of LIMITS) if (bare.startsWith(prefix)) return limit;
  return null;
}
