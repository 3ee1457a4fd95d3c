/** `POST /v1/embeddings`: a string, 1–2048 strings, a token array or token arrays; float or base64. */
import { z } from 'zod';
import { modelName, optional, positiveInt, user } from './common.ts';

const token = z.number().int().min(0);
export const embeddingsInput = z.union([
  z.string().min(1),
  z.array(z.string().min(1)).min(1).max(2048),
  z.array(token).min(1),
  z.array(z.array(token).min(1)).min(1).max(2048),
]);

export const embeddingsRequestSchema = z.looseObject({
  model: modelName,
  input: embeddingsInput,
  encoding_format: optional(z.enum(['float', 'base64'])),
  dimensions: optional(positiveInt),
  user: optional(user),
});

export type EmbeddingsRequest = z.output<typeof embeddingsRequestSchema>;
