/**
 * The normalised usage shape every adapter reports. Token counts follow OpenAI's semantics:
 * `inputTokens` includes cache reads and writes, `outputTokens` includes reasoning.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** True when the upstream gave no usage and we counted tokens ourselves. */
  estimated: boolean;
}

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  estimated: false,
});

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};

/** Reads an OpenAI `usage` object (chat, completions or embeddings); null when absent. */
export function fromOpenAIUsage(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const prompt = obj(u.prompt_tokens_details);
  const completion = obj(u.completion_tokens_details);
  return {
    inputTokens: num(u.prompt_tokens ?? u.input_tokens),
    outputTokens: num(u.completion_tokens ?? u.output_tokens),
    cacheReadTokens: num(prompt.cached_tokens),
    cacheWriteTokens: num(prompt.cache_write_tokens),
    reasoningTokens: num(completion.reasoning_tokens),
    estimated: false,
  };
}

/** Builds an OpenAI `usage` object from the normalised shape (for translated providers and estimates). */
export function toOpenAIUsage(u: Usage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cacheReadTokens, ...(u.cacheWriteTokens ? { cache_write_tokens: u.cacheWriteTokens } : {}) },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
  return out;
}
