/**
 * `POST /v1/audio/transcriptions` and `/translations` (multipart): the text fields, as the strings a
 * form carries. Fields the gateway routes on (`model`, `stream`, `response_format`) must appear once.
 */
import { z } from 'zod';
import { modelName, optional } from './common.ts';

/** A form number: the SDKs send `temperature=0.2` as text. */
const formNumber = (min: number, max: number) =>
  z
    .string()
    .trim()
    .refine((s) => s !== '' && Number.isFinite(Number(s)), 'expected a number')
    .refine((s) => Number(s) >= min && Number(s) <= max, `expected a number from ${min} to ${max}`);
const formBoolean = z.string().trim().pipe(z.enum(['true', 'false']));

/** Fields whose second copy would let the gateway route on one value and the provider read another. */
export const SINGLE_VALUED_AUDIO_FIELDS = ['model', 'stream', 'response_format', 'language', 'temperature', 'prompt'] as const;

export const audioFieldsSchema = z.looseObject({
  model: z.string().trim().pipe(modelName),
  language: optional(z.string().max(32)),
  prompt: optional(z.string()),
  temperature: optional(formNumber(0, 1)),
  response_format: optional(z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'])),
  stream: optional(formBoolean),
});

export type AudioFields = z.output<typeof audioFieldsSchema>;
