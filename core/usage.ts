/**
 * The normalised usage shape every adapter reports. Token counts follow OpenAI's semantics:
 * `inputTokens` includes cache reads and writes (and audio and image input tokens), `outputTokens`
 * includes reasoning (and audio and image output tokens). The optional fields are breakdowns priced
 * at their own rates; absent means none.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** All cache writes; `cacheWrite1hTokens` is the part written with a 1-hour TTL. */
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** True when the upstream gave no usage and we counted tokens ourselves. */
  estimated: boolean;
  cacheWrite1hTokens?: number;
  audioInputTokens?: number;
  /** Audio tokens among the cache reads (Gemini, OpenAI realtime). */
  audioCacheReadTokens?: number;
  audioOutputTokens?: number;
  imageInputTokens?: number;
  imageOutputTokens?: number;
  /** Seconds of audio, for per-minute prices (whisper-1). */
  audioSeconds?: number;
  /** Images generated, for per-image prices (dall-e). */
  images?: number;
  /** `size|quality` of those images. */
  imageKind?: string;
  /** What the upstream itself says it billed (OpenRouter `usage.cost`), USD. Preferred over our price. */
  upstreamCostUsd?: number;
  /** The `service_tier` the upstream reports it served the call with. */
  serviceTier?: string;
  /** True when the upstream reported impossible counts that were clamped (see `sanitizeUsage`). */
  clamped?: boolean;
}

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  estimated: false,
});

/** No call uses a billion tokens; a count above this is an upstream bug, not usage. */
export const MAX_SANE_TOKENS = 1e9;
/** No call costs more than this; an upstream cost above it is a bug. */
export const MAX_SANE_COST_USD = 10_000;

const COUNT_FIELDS = [
  'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens', 'cacheWrite1hTokens',
  'audioInputTokens', 'audioCacheReadTokens', 'audioOutputTokens', 'imageInputTokens', 'imageOutputTokens', 'audioSeconds', 'images',
] as const;

/**
 * Whether a reported usage's token counts can stand for the call: its input and output are counts (finite,
 * not negative). One that is not (a negative count) is replaced by the gateway's own estimate, as a missing
 * usage is; clamped to 0, it made the call free.
 */
export function reportsCounts(u: Usage): boolean {
  return isCount(u.inputTokens) && isCount(u.outputTokens);
}

const isCount = (v: number): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * Clamps what an upstream reported into counts that can be priced: integers from 0 to 1e9 (negative,
 * NaN or 1e308 would otherwise turn into refunds or an Infinity that poisons a key's running spend), and
 * output to `outputCeiling` when the call set one.
 * Returns the same object when nothing needed fixing (the common case allocates nothing).
 */
export function sanitizeUsage(u: Usage, outputCeiling: number | null = null): Usage {
  let out: Usage | null = null;
  for (const f of COUNT_FIELDS) {
    const v = u[f];
    if (v === undefined) continue;
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_SANE_TOKENS) continue;
    out ??= { ...u };
    out[f] = typeof v === 'number' && v > MAX_SANE_TOKENS ? MAX_SANE_TOKENS : 0;
    out.clamped = true;
  }
  const c = u.upstreamCostUsd;
  if (c !== undefined && !(typeof c === 'number' && Number.isFinite(c) && c >= 0 && c <= MAX_SANE_COST_USD)) {
    out ??= { ...u };
    delete out.upstreamCostUsd;
    out.clamped = true;
  }
  // More output than the call allowed (its cap per choice, with room for thinking; see run-call.ts).
  if (outputCeiling !== null && (out ?? u).outputTokens > outputCeiling) {
    out ??= { ...u };
    out.outputTokens = outputCeiling;
    out.clamped = true;
  }
  if (out === null) return u;
  // Parts cannot exceed their wholes once clamped.
  out.cacheReadTokens = Math.min(out.cacheReadTokens, out.inputTokens);
  out.cacheWriteTokens = Math.min(out.cacheWriteTokens, out.inputTokens - out.cacheReadTokens);
  out.reasoningTokens = Math.min(out.reasoningTokens, out.outputTokens);
  return out;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};

/**
 * Reads an OpenAI-shaped `usage` object (chat, completions, embeddings, images, transcriptions, and the
 * OpenAI-compatible hosts' additions); null when absent.
 * - DeepSeek reports `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`, often without `prompt_tokens_details`.
 * - OpenRouter reports what it billed in `usage.cost` (USD).
 * - Images and transcriptions use `input_tokens`/`output_tokens` with `input_tokens_details.{text,image,audio}_tokens`.
 */
export function fromOpenAIUsage(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const prompt = obj(u.prompt_tokens_details ?? u.input_tokens_details ?? u.input_token_details);
  const completion = obj(u.completion_tokens_details ?? u.output_tokens_details);
  let cacheRead = num(prompt.cached_tokens);
  if (cacheRead === 0 && typeof u.prompt_cache_hit_tokens === 'number') cacheRead = num(u.prompt_cache_hit_tokens);
  const out: Usage = {
    inputTokens: num(u.prompt_tokens ?? u.input_tokens),
    outputTokens: num(u.completion_tokens ?? u.output_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: num(prompt.cache_write_tokens ?? prompt.cache_creation_tokens),
    reasoningTokens: num(completion.reasoning_tokens),
    estimated: false,
  };
  if (out.inputTokens === 0 && typeof u.prompt_cache_hit_tokens === 'number') {
    out.inputTokens = num(u.prompt_cache_hit_tokens) + num(u.prompt_cache_miss_tokens);
  }
  const audioIn = num(prompt.audio_tokens);
  if (audioIn > 0) out.audioInputTokens = audioIn;
  const imageIn = num(prompt.image_tokens);
  if (imageIn > 0) out.imageInputTokens = imageIn;
  const audioOut = num(completion.audio_tokens);
  if (audioOut > 0) out.audioOutputTokens = audioOut;
  const imageOut = num(completion.image_tokens);
  if (imageOut > 0) out.imageOutputTokens = imageOut;
  if (typeof u.cost === 'number') out.upstreamCostUsd = u.cost;
  if (typeof u.seconds === 'number' && u.type === 'duration') out.audioSeconds = u.seconds;
  return out;
}

/** Builds an OpenAI `usage` object from the normalised shape (for translated providers and estimates). */
export function toOpenAIUsage(u: Usage): Record<string, unknown> {
  const promptDetails: Record<string, unknown> = { cached_tokens: u.cacheReadTokens };
  if (u.cacheWriteTokens) promptDetails.cache_write_tokens = u.cacheWriteTokens;
  if (u.audioInputTokens) promptDetails.audio_tokens = u.audioInputTokens;
  const completionDetails: Record<string, unknown> = { reasoning_tokens: u.reasoningTokens };
  if (u.audioOutputTokens) completionDetails.audio_tokens = u.audioOutputTokens;
  const out: Record<string, unknown> = {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: promptDetails,
    completion_tokens_details: completionDetails,
  };
  if (u.estimated) out.estimated = true;
  return out;
}
