/**
 * What a recorded answer says about its cost and tokens, read back from the bytes the client got: the
 * `x-gateway-cost-usd` header, else `usage.cost` in the body or in the stream's usage chunk (also
 * `response.usage` for Responses events, `message.usage`/`usage` for Anthropic ones).
 */
import { chunkBytes } from './format.ts';
import type { Interaction } from './format.ts';

interface AnswerFacts {
  costUsd: number | null;
  inputTokens: number;
  outputTokens: number;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function usageOf(doc: Json): Json | null {
  return obj(doc.usage) ?? obj(obj(doc.response)?.usage) ?? obj(obj(doc.message)?.usage);
}

function fold(facts: AnswerFacts, doc: unknown): void {
  const d = obj(doc);
  const u = d ? usageOf(d) : null;
  if (!u) return;
  facts.costUsd = num(u.cost) ?? facts.costUsd;
  facts.inputTokens = num(u.prompt_tokens) ?? num(u.input_tokens) ?? facts.inputTokens;
  facts.outputTokens = num(u.completion_tokens) ?? num(u.output_tokens) ?? facts.outputTokens;
}

function sseData(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    try {
      out.push(JSON.parse(line.slice(5).trim()));
    } catch {
      /* `[DONE]` and partial lines */
    }
  }
  return out;
}

export function answerFacts(i: Pick<Interaction, 'headers' | 'json' | 'text' | 'chunks'>): AnswerFacts {
  const facts: AnswerFacts = { costUsd: null, inputTokens: 0, outputTokens: 0 };
  if (i.json !== undefined) fold(facts, i.json);
  else if (i.chunks !== undefined) for (const d of sseData(Buffer.concat(i.chunks.map(chunkBytes)).toString('utf8'))) fold(facts, d);
  else if (i.text !== undefined) {
    try {
      fold(facts, JSON.parse(i.text));
    } catch {
      /* a text answer (srt, vtt) has no usage */
    }
  }
  const header = Number(i.headers['x-gateway-cost-usd']);
  if (i.headers['x-gateway-cost-usd'] !== undefined && Number.isFinite(header)) facts.costUsd = header;
  return facts;
}
