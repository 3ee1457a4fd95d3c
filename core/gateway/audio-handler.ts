/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations` (multipart/form-data). The body's bytes
 * are forwarded unchanged with the client's boundary; only the `model` field is rewritten when the
 * resolved name (an alias, a generic name, an Azure deployment) differs from the one sent. The answer
 * goes back with its own Content-Type: JSON (`json`, `verbose_json`) or text (`text`, `srt`, `vtt`).
 * Priced only when the provider reports tokens (gpt-4o-transcribe); whisper-1 reports a duration.
 */
import { badRequest } from '../errors.ts';
import type { PassthroughBody, PassthroughPath } from '../providers/types.ts';
import { admit } from './admission.ts';
import { countTokens } from './estimate.ts';
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
  const admission = admit(ctx, model, { inputTokens: countTokens(fields.get('prompt')?.value ?? ''), maxOutputTokens: null });
  try {
    const serving = servingCandidates(admission, path, model);
    const body: PassthroughBody = {
      contentType,
      build: (wireModel) => (wireModel === modelField.value ? raw : replacePartContent(raw, modelField.part, wireModel)),
    };
    const success = await runPassthrough(ctx, serving, { path, stream, jsonOnly: false, body: () => body });
    if (success.value.kind === 'sse') {
      await relayPassthroughStream(ctx, success);
      return;
    }
    const usage = success.value.kind === 'json' ? tokenUsage(success.value.json.usage) : null;
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
