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
  const out: Usage = {
    inputTokens: num(u.promptTokenCount) + num(u.toolUsePromptTokenCount),
    outputTokens: num(u.candidatesTokenCount) + thoughts,
    cacheReadTokens: num(u.cachedContentTokenCount),
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
    estimated: false,
  };
  // Audio (and image) tokens have their own rates: `*TokensDetails` split each count by modality.
  const audioIn = modality(u.promptTokensDetails, 'AUDIO');
  if (audioIn > 0) out.audioInputTokens = audioIn;
  const audioCached = modality(u.cacheTokensDetails, 'AUDIO');
  if (audioCached > 0) out.audioCacheReadTokens = audioCached;
  const audioOut = modality(u.candidatesTokensDetails, 'AUDIO');
  if (audioOut > 0) out.audioOutputTokens = audioOut;
  const imageOut = modality(u.candidatesTokensDetails, 'IMAGE');
  if (imageOut > 0) out.imageOutputTokens = imageOut;
  return out;
}

/** The token count of one modality in a `[{modality, tokenCount}]` list. */
function modality(details: unknown, which: string): number {
  if (!Array.isArray(details)) return 0;
  let n = 0;
  for (const d of details) {
    if (d !== null && typeof d === 'object' && (d as { modality?: unknown }).modality === which) n += num((d as { tokenCount?: unknown }).tokenCount);
  }
  return n;
}
