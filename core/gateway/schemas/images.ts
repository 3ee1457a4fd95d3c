/** `POST /v1/images/generations`: prompt, n 1–10, and the enumerated size, quality, style and formats. */
import { z } from 'zod';
import { modelName, optional, stream, user } from './common.ts';

/** The listed sizes, `auto`, or any `WxH` (gpt-image-2 takes arbitrary ones). */
const size = z.string().regex(/^(auto|\d{2,5}x\d{2,5})$/);

export const imagesRequestSchema = z.looseObject({
  prompt: z.string().min(1).max(32_000),
  model: optional(modelName),
  n: optional(z.number().int().min(1).max(10)),
  size: optional(size),
  quality: optional(z.enum(['standard', 'hd', 'low', 'medium', 'high', 'auto'])),
  style: optional(z.enum(['vivid', 'natural'])),
  response_format: optional(z.enum(['url', 'b64_json'])),
  output_format: optional(z.enum(['png', 'jpeg', 'webp'])),
  output_compression: optional(z.number().int().min(0).max(100)),
  background: optional(z.enum(['transparent', 'opaque', 'auto'])),
  moderation: optional(z.enum(['low', 'auto'])),
  stream: optional(stream),
  partial_images: optional(z.number().int().min(0).max(3)),
  user: optional(user),
});

export type ImagesRequest = z.output<typeof imagesRequestSchema>;
