/**
 * The shape of an Anthropic Messages request, as far as the gateway checks it (fields it does not know
 * pass through: Anthropic's list of body fields grows with every beta).
 */
import { z } from 'zod';

const block = z.looseObject({ type: z.string() });
const content = z.union([z.string(), z.array(block)]);

export const messagesSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant', 'system']), content })).min(1),
  system: z.union([z.string(), z.array(block)]).optional(),
  stream: z.boolean().optional(),
  tools: z.array(z.looseObject({ name: z.string().optional(), type: z.string().optional() })).optional(),
});

export const countTokensSchema = messagesSchema.omit({ max_tokens: true, stream: true });

export type MessagesBody = z.infer<typeof messagesSchema>;
export type CountTokensBody = z.infer<typeof countTokensSchema>;
