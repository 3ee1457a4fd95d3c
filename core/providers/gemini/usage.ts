import type { Usage } from '../../usage.ts';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Gemini `usageMetadata` → normalised usage (protocol.md §10.2). Gemini's candidate count excludes
 * thoughts while OpenAI's completion count includes reasoning, so thoughts are added to the output.
 * `promptTokenCount` already includes cached tokens, matching our input semantics; tool-use prompt
 * tokens (results of server-side tools) are input Gemini bills separately. Gemini has no cache writes
 * on this API (explicit caches are created and billed by their own endpoint).
 */
export function fromGeminiUsage(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const thoughts = num(u.thoughtsTokenCount);
  return {
    inputTokens: num(u.promptTokenCount) + num(u.toolUsePromptTokenCount),
    outputTokens: num(u.candidatesTokenCount) + thoughts,
    cacheReadTokens: num(u.cachedContentTokenCount),
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
    estimated: false,
  };
}
