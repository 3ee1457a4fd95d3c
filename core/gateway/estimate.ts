/**
 * Token estimates for upstreams that report no usage. gpt-tokenizer is loaded on first need (and
 * warmed at start) so the hot path never pays its import.
 */
import type { Usage } from '../usage.ts';
import { countTokensOffThread } from './tokenizer-pool.ts';

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
 * The most characters tokenised on the request thread for one count: tokenising 45 MB takes over a
 * second, and other requests must not wait on it. Larger texts get an exact count from the tokenizer
 * worker through the async functions below; the synchronous `countTokens` estimates them by length.
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

const totalChars = (texts: readonly string[]): number => texts.reduce((n, t) => n + t.length, 0);
const sumTokens = (texts: readonly string[]): number => texts.reduce((n, t) => n + countTokens(t), 0);

/** The exact token count of `texts`, whatever their size: up to MAX_TOKENIZED_CHARS here, beyond on the tokenizer worker. */
export async function countTokensExact(texts: string | readonly string[]): Promise<number> {
  const list = typeof texts === 'string' ? [texts] : texts;
  if (totalChars(list) > MAX_TOKENIZED_CHARS) return countTokensOffThread(list);
  await warmTokenizer().catch(() => undefined);
  return sumTokens(list);
}

/**
 * A prompt's token count: now (for admission, which is synchronous) and exact (for an estimated usage).
 * An object with methods, never a function with `exact` attached: a property added to a fresh closure on
 * every call made V8 keep each call's whole request (body, response, parsed JSON) through the next young
 * collection, which then promoted it: ~1 KB per call, measured, on a path that does nothing else.
 */
export interface PromptCount {
  now(): number;
  exact(): Promise<number>;
}

/** Admission counts the prompt only for a key with a budget or a tokens-per-minute limit. */
export const admissionCountsPrompt = (key: { budgetUsd: number | null; tpm: number | null }): boolean => key.budgetUsd != null || key.tpm != null;

type PromptTexts = string | readonly string[];

/**
 * A prompt's token count. An ordinary prompt is counted here, on first ask. A huge one is counted on
 * the tokenizer worker, so no other request waits behind it: when admission needs the count (`needed`:
 * a budget or TPM reservation), the call waits for it and its reservation is exact; otherwise the count
 * runs while the call is forwarded, for the estimated usage if the upstream reports none.
 */
export function promptTokenCounter(texts: PromptTexts | (() => PromptTexts), needed: boolean): PromptCount | Promise<PromptCount> {
  if (typeof texts === 'function') {
    if (!needed) return new LazyCount(texts);
    texts = texts();
  }
  const list = typeof texts === 'string' ? [texts] : texts;
  const chars = totalChars(list);
  // Only a huge prompt waits (on the tokenizer thread); an ordinary one is answered without a promise.
  return chars <= MAX_TOKENIZED_CHARS ? new LocalCount(list) : offThreadCount(list, chars, needed);
}

class LocalCount implements PromptCount {
  readonly #list: readonly string[];
  #memo: number | null = null;

  constructor(list: readonly string[]) {
    this.#list = list;
  }

  now(): number {
    return (this.#memo ??= sumTokens(this.#list));
  }

  async exact(): Promise<number> {
    await warmTokenizer().catch(() => undefined);
    return sumTokens(this.#list);
  }
}

class OffThreadCount implements PromptCount {
  #known: number | null;
  readonly #chars: number;
  readonly #pending: Promise<number>;

  constructor(pending: Promise<number>, known: number | null, chars: number) {
    this.#pending = pending;
    this.#known = known;
    this.#chars = chars;
    if (known === null) void pending.then((n) => (this.#known = n), () => undefined);
  }

  now(): number {
    return this.#known ?? Math.ceil(this.#chars / 4);
  }

  exact(): Promise<number> {
    return this.#pending;
  }
}

async function offThreadCount(list: readonly string[], chars: number, needed: boolean): Promise<PromptCount> {
  const pending = countTokensOffThread(list);
  return new OffThreadCount(pending, needed ? await pending : null, chars);
}

/**
 * The count when admission does not need it: only an estimate (an upstream that reported no usage)
 * asks, so the prompt's text (given as a function) is built then, not on every call.
 */
class LazyCount implements PromptCount {
  readonly #texts: () => PromptTexts;
  #inner: PromptCount | Promise<PromptCount> | null = null;
  #memo: number | null = null;

  constructor(texts: () => PromptTexts) {
    this.#texts = texts;
  }

  // Admission asks only when it needs the count (never here); answered as the eager counter would, unwaited.
  now(): number {
    return (this.#memo ??= textTokens(this.#texts()));
  }

  async exact(): Promise<number> {
    this.#inner ??= promptTokenCounter(this.#texts(), false);
    return (await this.#inner).exact();
  }
}

function textTokens(texts: PromptTexts): number {
  const list = typeof texts === 'string' ? [texts] : texts;
  const chars = totalChars(list);
  return chars > MAX_TOKENIZED_CHARS ? Math.ceil(chars / 4) : sumTokens(list);
}

/**
 * Text of what a chat request sends, for counting its prompt tokens: the messages' text, the tool calls in the
 * history (names and arguments) and the tool and function definitions and a response schema, all of which
 * providers bill as prompt. Admission reserves a budget on this count; tools left out let a key with a coding
 * agent's tool schemas spend many times its budget.
 */
export function chatPromptText(body: { messages?: unknown; tools?: unknown; functions?: unknown; response_format?: unknown }): string {
  let out = '';
  if (Array.isArray(body.messages)) {
    for (const m of body.messages) {
      if (m === null || typeof m !== 'object') continue;
      const { content, tool_calls: calls, function_call: legacyCall } = m as { content?: unknown; tool_calls?: unknown; function_call?: unknown };
      if (typeof content === 'string') out += `${content}\n`;
      else if (Array.isArray(content)) {
        for (const part of content) {
          const text = (part as { text?: unknown })?.text;
          if (typeof text === 'string') out += `${text}\n`;
        }
      }
      if (Array.isArray(calls)) for (const c of calls) out += `${callText((c as { function?: unknown })?.function)}\n`;
      if (legacyCall !== undefined) out += `${callText(legacyCall)}\n`;
    }
  }
  for (const defs of [body.tools, body.functions]) if (Array.isArray(defs) && defs.length > 0) out += `${JSON.stringify(defs)}\n`;
  const format = body.response_format as { json_schema?: unknown } | undefined;
  if (format?.json_schema !== undefined) out += `${JSON.stringify(format.json_schema)}\n`;
  return out;
}

function callText(fn: unknown): string {
  const f = fn as { name?: unknown; arguments?: unknown } | null | undefined;
  return `${typeof f?.name === 'string' ? f.name : ''} ${typeof f?.arguments === 'string' ? f.arguments : ''}`;
}

/** `prompt`: its text, or the counter admission used (a huge prompt is then not tokenised twice). */
export async function estimateUsage(prompt: string | PromptCount, completionText: string, messageCount: number): Promise<Usage> {
  const [input, output] = await Promise.all([typeof prompt === 'string' ? countTokensExact(prompt) : prompt.exact(), countTokensExact(completionText)]);
  return {
    // OpenAI's chat format adds about 3 tokens per message and 3 for the reply priming.
    inputTokens: input + 3 * messageCount + 3,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    estimated: true,
  };
}
