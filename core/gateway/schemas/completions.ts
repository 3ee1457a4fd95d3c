/** `POST /v1/completions` (legacy): the prompt's four shapes and the sampling parameters' ranges. */
import { z } from 'zod';
import { choiceCount, logitBias, modelName, optional, penalty, positiveInt, probability, seed, stop, stream, streamOptions, temperature, user } from './common.ts';

const token = z.number().int().min(0);
export const completionPrompt = z.union([
  z.string(),
  z.array(z.string()).min(1),
  z.array(token).min(1),
  z.array(z.array(token).min(1)).min(1),
]);

export const completionRequestSchema = z.looseObject({
  model: modelName,
  prompt: completionPrompt,
  best_of: optional(choiceCount),
  echo: optional(z.boolean()),
  frequency_penalty: optional(penalty),
  presence_penalty: optional(penalty),
  logit_bias: optional(logitBias),
  logprobs: optional(z.number().int().min(0).max(5)),
  max_tokens: optional(positiveInt),
  n: optional(choiceCount),
  seed: optional(seed),
  stop: optional(stop),
  stream: optional(stream),
  stream_options: optional(streamOptions),
  suffix: optional(z.string()),
  temperature: optional(temperature),
  top_p: optional(probability),
  user: optional(user),
});

export type CompletionRequest = z.output<typeof completionRequestSchema>;
