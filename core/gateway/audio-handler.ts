/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations` (multipart/form-data). The body's bytes
 * are forwarded unchanged with the client's boundary; only the `model` field is rewritten when the
 * resolved name (an alias, a generic name, an Azure deployment) differs from the one sent. The answer
 * goes back with its own Content-Type: JSON (`json`, `verbose_json`) or text (`text`, `srt`, `vtt`).
 * Every format pays: the audio's duration is read from the file (`audio-duration.ts`) to reserve the
 * worst case before forwarding, and the call settles from the provider's token usage when a JSON answer
 * carries it, else from the duration (whisper-1's per-minute price; for token-priced models an estimate
 * of the audio tokens at OpenAI's ~1,000 per minute, plus the transcript's tokens, marked estimated).
 */
import { isPromise } from '../state/awaitable.ts';
import { badRequest } from '../errors.ts';
import type { PassthroughBody, PassthroughPath } from '../providers/types.ts';
import type { ModelPrice } from '../pricing/price.ts';
import { modelOutputLimit } from '../pricing/output-limits.ts';
import type { Usage } from '../usage.ts';
import type { Candidate } from './model-router.ts';
import { admit } from './admission.ts';
import { audioDuration, reserveSeconds } from './audio-duration.ts';
import { countTokens, warmTokenizer } from './estimate.ts';
import { fieldText, multipartBoundary, parseMultipart, replacePartContent } from './multipart.ts';
import type { MultipartPart } from './multipart.ts';
import { relayPassthroughStream, respondPassthrough, runPassthrough, servingCandidates, tokenUsage } from './passthrough.ts';
import type { RequestContext } from './request-context.ts';
import { audioFieldsSchema, SINGLE_VALUED_AUDIO_FIELDS } from './schemas/audio.ts';
import { parseRequest } from './schemas/common.ts';

export type AudioRoute = 'transcriptions' | 'translations';

export async function handleAudio(ctx: RequestContext, route: AudioRoute, raw: Buffer): Promise<void> {
  const { record } = ctx;
  const contentType = ctx.req.headers['content-type'];
  const boundary = multipartBoundary(contentType);
  if (!boundary || !contentType) {
    throw badRequest('This endpoint takes multipart/form-data (a `file` and a `model` field), with a boundary in its Content-Type.', 'invalid_content_type');
  }
  const parts = parseMultipart(raw, boundary);
  const fields = new Map<string, { part: MultipartPart; value: string }>();
  for (const p of parts) {
    if (p.filename !== null) continue;
    if (fields.has(p.name) && (SINGLE_VALUED_AUDIO_FIELDS as readonly string[]).includes(p.name)) {
      // The gateway would route on one copy and the provider might read the other.
      throw badRequest(`The form field '${p.name}' appears more than once; send it once.`, 'duplicate_parameter', p.name);
    }
    if (!fields.has(p.name)) fields.set(p.name, { part: p, value: fieldText(raw, p) });
  }
  const files = parts.filter((p) => p.name === 'file');
  if (files.length > 1) throw badRequest("The form field 'file' appears more than once; send one file.", 'duplicate_parameter', 'file');
  const file = files[0];
  const modelField = fields.get('model');
  record.requestBody = summarize(fields, file);
  if (!file) throw badRequest("Missing required parameter: 'file'.", 'missing_parameter', 'file');
  if (!modelField || modelField.value.trim() === '') throw badRequest('You must provide a model parameter.', 'missing_parameter', 'model');
  const checked = parseRequest(audioFieldsSchema, Object.fromEntries([...fields].map(([name, f]) => [name, f.value])));
  const model = checked.model;
  const stream = fields.get('stream')?.value.trim() === 'true';
  record.modelRequested = model;
  record.stream = stream;

  const path: PassthroughPath = route === 'transcriptions' ? '/audio/transcriptions' : '/audio/translations';
  const audio = raw.subarray(file.start, file.end);
  const duration = audioDuration(audio);
  const worstSeconds = reserveSeconds(audio, duration);
  const promptTokens = countTokens(fields.get('prompt')?.value ?? '');
  let admission = admit(ctx, model, {
    inputTokens: promptTokens,
    maxOutputTokens: null,
    unitWorstCase: (price, m) => audioWorstCaseUsd(price, m, worstSeconds, promptTokens),
    extraTokens: Math.ceil(worstSeconds * AUDIO_TOKENS_PER_SECOND),
  });
  if (isPromise(admission)) admission = await admission;
  try {
    const serving = servingCandidates(admission, path, model);
    const priceOf = (c: Candidate): ModelPrice | null => ctx.deps.prices.lookup(c.runtime.settings.type, c.runtime.settings.preset, c.model);
    const body: PassthroughBody = {
      contentType,
      build: (wireModel) => (wireModel === modelField.value ? raw : replacePartContent(raw, modelField.part, wireModel)),
    };
    const success = await runPassthrough(ctx, serving, { path, stream, jsonOnly: false, body: () => body });
    if (success.value.kind === 'sse') {
      await relayPassthroughStream(ctx, success, (text) => estimatedAudioUsage(priceOf(success.candidate), duration.seconds, promptTokens, text, duration.measured));
      return;
    }
    const v = success.value;
    let usage: Usage | null = v.kind === 'json' ? tokenUsage(v.json.usage) : null;
    if (!usage) {
      await warmTokenizer().catch(() => undefined);
      const reported = v.kind === 'json' ? reportedSeconds(v.json) : null;
      const text = v.kind === 'json' ? (typeof v.json.text === 'string' ? v.json.text : '') : v.kind === 'raw' ? v.bytes.toString('utf8') : '';
      usage = estimatedAudioUsage(priceOf(success.candidate), reported ?? duration.seconds, promptTokens, text, reported !== null || duration.measured);
    }
    respondPassthrough(ctx, success, usage);
  } finally {
    // Whatever the outcome (even a client gone mid-stream), the key pays what the record says was used.
    admission.settle(ctx.record.priced.costUsd);
  }
}

/** What the audit row keeps of the request: the text fields and the file's name and size, never the audio. */
function summarize(fields: Map<string, { value: string }>, file: MultipartPart | undefined): string {
  const out: Record<string, unknown> = {};
  for (const [name, { value }] of fields) out[name] = value.length > 1000 ? `${value.slice(0, 1000)}…` : value;
  if (file) out.file = `<${file.filename ?? 'file'}, ${file.end - file.start} bytes${file.contentType ? `, ${file.contentType}` : ''}>`;
  return JSON.stringify(out);
}

/** OpenAI bills gpt-4o(-mini)-transcribe audio at about 1,000 tokens a minute ($0.006/min at $6/M). */
const AUDIO_TOKENS_PER_SECOND = 1000 / 60;

/** whisper-1's JSON answers say how long the audio was: `usage.seconds` or verbose_json's `duration`. */
function reportedSeconds(json: Record<string, unknown>): number | null {
  const u = json.usage as { type?: unknown; seconds?: unknown } | undefined;
  if (u && u.type === 'duration' && typeof u.seconds === 'number') return u.seconds;
  return typeof json.duration === 'number' ? json.duration : null;
}

/**
 * Usage for an answer without token counts. A per-minute model (whisper-1) pays the duration, exact
 * when the provider or the file's header said it; a token-priced one (gpt-4o-transcribe answering in
 * `text`/`srt`/`vtt`) pays audio tokens estimated from the duration plus the transcript's tokens.
 */
function estimatedAudioUsage(price: ModelPrice | null, seconds: number, promptTokens: number, transcript: string, exactDuration: boolean): Usage {
  const base = { cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, audioSeconds: seconds };
  if (price?.perMinuteUsd != null) return { ...base, inputTokens: 0, outputTokens: 0, estimated: !exactDuration };
  const audioTokens = Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND);
  return { ...base, inputTokens: audioTokens + promptTokens, audioInputTokens: audioTokens, outputTokens: countTokens(transcript), estimated: true };
}

/** The most a transcription of `seconds` can cost with this price. */
function audioWorstCaseUsd(price: ModelPrice, model: string, seconds: number, promptTokens: number): number {
  if (price.perMinuteUsd != null) return (seconds / 60) * price.perMinuteUsd;
  const audioTokens = Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND * 1.5);
  // A transcript cannot be longer than what is said: fast speech is ~5 tokens a second; 10 plus a margin is the bound.
  const out = Math.min(price.maxOutputTokens ?? modelOutputLimit(model), Math.ceil(seconds * 10) + 100);
  return (audioTokens * (price.audioInputPerMTok ?? price.inputPerMTok) + promptTokens * price.inputPerMTok + out * price.outputPerMTok) / 1e6;
}
