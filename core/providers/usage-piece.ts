/** The closing `usage` piece a translating adapter emits: the `choices: []` chunk OpenAI sends when asked. */
import { toOpenAIUsage } from '../usage.ts';
import type { Usage } from '../usage.ts';
import type { StreamPiece } from './types.ts';

export function usagePiece(stream: { id: string; created: number; model: string }, usage: Usage): StreamPiece {
  return {
    kind: 'usage',
    usage,
    chunk: { id: stream.id, object: 'chat.completion.chunk', created: stream.created, model: stream.model, choices: [], usage: toOpenAIUsage(usage) },
  };
}
