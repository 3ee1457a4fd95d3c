/**
 * Token estimates for upstreams that report no usage. gpt-tokenizer is loaded on first need (and
 * warmed at start) so the hot path never pays its import.
 */
import type { Usage } from '../usage.ts';

type Encode = (text: string) => number[];
let encodeFn: Encode | null = null;
let loading: Promise<void> | null = null;

export function warmTokenizer(): Promise<void> {
  loading ??= import('gpt-tokenizer').then((m) => {
    encodeFn = m.encode as Encode;
  });
  return loading;
}

/**
 * Longer texts are estimated by length: tokenising 45 MB takes over a second of the event loop, and
 * other requests must not wait on an estimate (rows that use it are marked `estimated` anyway).
 */
export const MAX_TOKENIZED_CHARS = 256 * 1024;

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > MAX_TOKENIZED_CHARS) return Math.ceil(text.length / 4);
  if (encodeFn) return encodeFn(text).length;
  // The tokenizer costs ~70 MiB, so it loads on first need; until then, the usual rule of thumb.
  void warmTokenizer().catch(() => undefined);
  return Math.ceil(text.length / 4);
}

/** Text of the messages a chat request sends, for estimating its prompt tokens. */
export function chatPromptText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  let out = '';
  for (const m of messages) {
    const content = (m as { content?: unknown })?.content;
    if (typeof content === 'string') out += `${content}\n`;
    else if (Array.isArray(content)) {
      for (const part of content) {
        const text = (part as { text?: unknown })?.text;
        if (typeof text === 'string') out += `${text}\n`;
      }
    }
  }
  return out;
}

export async function estimateUsage(promptText: string, completionText: string, messageCount: number): Promise<Usage> {
  await warmTokenizer().catch(() => undefined);
  return {
    // OpenAI's chat format adds about 3 tokens per message and 3 for the reply priming.
    inputTokens: countTokens(promptText) + 3 * messageCount + 3,
    outputTokens: countTokens(completionText),
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    estimated: true,
  };
}
