import { createHash } from 'node:crypto';

// The deterministic "model" behind every fake upstream. Provider-neutral: each fake turns its own
// request into a ScenarioInput, runs it, and renders the ScenarioReply in its wire format. Keeping the
// behaviour in one place means a gateway test can send the same conversation through any provider and
// expect the same text and the same hand-computable token counts.
//
// Rules (gateway tests hand-compute prices from these, so they are part of the contract):
// - Text reply: `Echo: <last user text>`; a conversation ending in a tool result replies
//   `Tool said: <result text>`. Text parts of one message are joined with a single space.
// - A system prompt prefixes the text reply with `[sys:<first 20 chars of system text>] `, so tests can
//   prove the system prompt arrived. Not in JSON mode: there the reply must stay parseable JSON.
// - JSON mode replies `{"echo":"<last user text>"}`.
// - Tools declared and the conversation ends with a user message: one call to the first declared tool
//   with arguments {"city":"Paris"}.
// - maxTokens below the reply's word count truncates the text to that many words, finish = length.
// - Tokens: words = whitespace-separated runs.
//     promptTokens     = Σ over messages (the system prompt counts as one message) of words + 3
//     completionTokens = words in the (possibly truncated) reply; a tool call counts the words of
//                        `<name> <arguments JSON>` (2 for the canonical call).
//   These are the *uncached, visible* counts. The fakes add the cache and reasoning knobs on top, each
//   the way its provider reports them (see usage helpers in each fake).

export type ScenarioRole = 'user' | 'assistant' | 'tool';

export interface ScenarioMessage {
  /** 'tool' = a tool result, whatever the provider calls it. */
  role: ScenarioRole;
  text: string;
}

export interface ScenarioInput {
  system?: string;
  messages: ScenarioMessage[];
  /** Names of the declared tools, in declaration order. */
  toolNames: string[];
  json: boolean;
  maxTokens?: number;
  /** A scripted call: when this tool is declared and the turn is the user's, call it with these arguments. */
  forcedTool?: { name: string; arguments: Record<string, unknown> };
  /**
   * A talkative model: the reply is padded with filler words up to this many before `maxTokens`
   * applies, so a request without `max_tokens` gets a long answer, as a real model may give.
   */
  padToWords?: number;
}

export interface ScenarioToolCall {
  name: string;
  arguments: { city: string };
  argumentsJson: string;
  /** The arguments JSON cut in 3 pieces, for streamed tool-call deltas. */
  argumentFragments: string[];
}

export type ScenarioFinish = 'stop' | 'length' | 'tool_calls';

export interface ScenarioReply {
  /** Empty for a tool call. */
  text: string;
  /** `text` cut after each run of whitespace: one streamed content event each; they concatenate to `text`. */
  pieces: string[];
  toolCall?: ScenarioToolCall;
  finish: ScenarioFinish;
  promptTokens: number;
  completionTokens: number;
}

export const TOOL_ARGUMENTS = { city: 'Paris' } as const;

export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Pieces whose concatenation is exactly `text`; each ends after the whitespace that follows a word. */
export function splitWords(text: string): string[] {
  if (text === '') return [];
  return text.split(/(?<=\s)(?=\S)/);
}

export function truncateWords(text: string, max: number): string {
  const pieces = splitWords(text);
  let words = 0;
  let out = '';
  for (const piece of pieces) {
    if (/\S/.test(piece)) words++;
    if (words > max) break;
    out += piece;
  }
  return out.trimEnd();
}

export function promptTokens(input: ScenarioInput): number {
  const texts = input.messages.map((m) => m.text);
  if (input.system !== undefined) texts.push(input.system);
  return texts.reduce((sum, t) => sum + countWords(t) + 3, 0);
}

export function runScenario(input: ScenarioInput): ScenarioReply {
  const prompt = promptTokens(input);
  const last = input.messages.at(-1);

  if (input.toolNames.length > 0 && last?.role === 'user') {
    const forced = input.forcedTool && input.toolNames.includes(input.forcedTool.name) ? input.forcedTool : undefined;
    const toolCall = forced ? makeToolCall(forced.name, forced.arguments) : makeToolCall(input.toolNames[0]);
    return {
      text: '',
      pieces: [],
      toolCall,
      finish: 'tool_calls',
      promptTokens: prompt,
      completionTokens: countWords(`${toolCall.name} ${toolCall.argumentsJson}`),
    };
  }

  let text: string;
  if (last?.role === 'tool') {
    text = `Tool said: ${last.text}`;
  } else {
    const userText = [...input.messages].reverse().find((m) => m.role === 'user')?.text ?? '';
    text = input.json ? JSON.stringify({ echo: userText }) : `Echo: ${userText}`;
  }
  if (input.system !== undefined && !input.json) text = `[sys:${input.system.slice(0, 20)}] ${text}`;

  if (input.padToWords !== undefined && !input.json) {
    const missing = input.padToWords - countWords(text);
    if (missing > 0) text += ' lorem'.repeat(missing);
  }
  let finish: ScenarioFinish = 'stop';
  if (input.maxTokens !== undefined && countWords(text) > input.maxTokens) {
    text = truncateWords(text, input.maxTokens);
    finish = 'length';
  }
  return { text, pieces: splitWords(text), finish, promptTokens: prompt, completionTokens: countWords(text) };
}

function makeToolCall(name: string, args: Record<string, unknown> = TOOL_ARGUMENTS): ScenarioToolCall {
  const argumentsJson = JSON.stringify(args);
  // Cut inside the key and inside the value, like real streams that split mid-token.
  const argumentFragments = [argumentsJson.slice(0, 5), argumentsJson.slice(5, 12), argumentsJson.slice(12)];
  return { name, arguments: { ...args } as ScenarioToolCall['arguments'], argumentsJson, argumentFragments };
}

/**
 * A unit-length vector derived from a hash of `input`. Values are float32-exact (Math.fround) so the
 * float and base64 encodings of the same input decode to identical numbers.
 */
export function fakeEmbedding(input: string, dimensions = 8): number[] {
  const raw: number[] = [];
  for (let block = 0; raw.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${input}`).digest();
    for (let i = 0; i + 4 <= digest.length && raw.length < dimensions; i += 4) {
      raw.push(digest.readUInt32LE(i) / 0x1_0000_0000 - 0.5);
    }
  }
  const norm = Math.hypot(...raw) || 1;
  return raw.map((v) => Math.fround(v / norm));
}
