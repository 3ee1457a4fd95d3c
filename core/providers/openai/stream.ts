/**
 * Relays an OpenAI-compatible chat stream. Chunks without a `usage` key pass through byte for byte;
 * usage is lifted out wherever the upstream put it (its own `choices: []` chunk, the finish chunk,
 * `usage: null` on every chunk, or Groq's `x_groq.usage`) so the gateway alone decides what the client sees.
 */
import { fromOpenAIUsage } from '../../usage.ts';
import type { Usage } from '../../usage.ts';
import type { StreamPiece, StreamTranslator, SseEvent } from '../types.ts';
import { PlainChunkReader, endsWithUsageNull, withoutUsageNull } from './chunk-text.ts';
import { endedEarly, failureFromErrorObject } from './errors.ts';

interface ChunkShape {
  id?: unknown;
  object?: unknown;
  created?: unknown;
  model?: unknown;
  system_fingerprint?: unknown;
  /** Chat chunks carry `delta.content`; legacy completion chunks (`text_completion`) carry `text`. */
  choices?: Array<{ delta?: { content?: unknown }; text?: unknown; finish_reason?: unknown }>;
  usage?: unknown;
  error?: unknown;
  /** Groq: `x_groq.usage` on the finish chunk, its usage report when `stream_options` was not honoured. */
  x_groq?: unknown;
}

/** Removes `x_groq.usage` from the chunk (the gateway alone places usage) and returns it, if any. */
function takeGroqUsage(chunk: ChunkShape): Record<string, unknown> | undefined {
  const groq = chunk.x_groq;
  if (groq === null || typeof groq !== 'object' || !('usage' in groq)) return undefined;
  const { usage, ...rest } = groq as Record<string, unknown>;
  chunk.x_groq = rest;
  return usage !== null && typeof usage === 'object' ? (usage as Record<string, unknown>) : undefined;
}

export class OpenAIStreamTranslator implements StreamTranslator {
  private usage: Usage | null = null;
  private usageChunk: Record<string, unknown> | null = null;
  /** The usage chunk's text, when the upstream's chunk is already what goes out (its own `choices: []`, no Groq field). */
  private usageText: string | null = null;
  /** A standard `usage` report, when one comes, wins over Groq's `x_groq.usage`. */
  private usageFromGroq = false;
  private ended = false;
  /** Some choice's `finish_reason` came: a stream closed without `[DONE]` after it is whole. */
  private finished = false;
  private readonly plain = new PlainChunkReader();

  push(ev: SseEvent): StreamPiece[] {
    if (this.ended) return [];
    const data = ev.data;
    if (data === '[DONE]') return this.complete();
    // The common chunk (no usage, no error) is relayed as sent: only its text is read, without a parse.
    // With usage asked for, OpenAI ends each such chunk with `"usage":null`: cut as text (below), the same.
    const plain = this.plain.read(data);
    if (plain !== undefined) {
      if (plain.finishes) this.finished = true;
      return [{ kind: 'chunk', json: plain.json, text: plain.text }];
    }
    let chunk: ChunkShape;
    try {
      chunk = JSON.parse(data) as ChunkShape;
    } catch {
      return [{ kind: 'error', failure: { status: 502, message: 'The provider sent a malformed stream event.', type: 'api_error', code: 'malformed_stream' } }];
    }
    if (chunk === null || typeof chunk !== 'object') return [];
    if (chunk.error) return [{ kind: 'error', failure: failureFromErrorObject(502, chunk.error) }];
    const choices = chunk.choices;
    const hasUsageKey = 'usage' in chunk;
    const hadGroqUsage = chunk.x_groq !== null && typeof chunk.x_groq === 'object' && 'usage' in chunk.x_groq;
    const groqUsage = hadGroqUsage ? takeGroqUsage(chunk) : undefined;
    if (hasUsageKey && chunk.usage) {
      this.usage = fromOpenAIUsage(chunk.usage);
      this.usageChunk = { ...chunk, choices: [] };
      this.usageText = !hadGroqUsage && Array.isArray(choices) && choices.length === 0 ? data : null;
      this.usageFromGroq = false;
    } else if (groqUsage !== undefined && (this.usage === null || this.usageFromGroq)) {
      this.usage = fromOpenAIUsage(groqUsage);
      this.usageChunk = { ...chunk, choices: [], usage: groqUsage };
      this.usageText = null;
      this.usageFromGroq = true;
    }
    if (!Array.isArray(choices) || choices.length === 0) return [];
    if (!this.finished && choices.some((c) => c?.finish_reason != null)) this.finished = true;
    const first = choices[0];
    const text = typeof first?.delta?.content === 'string' ? first.delta.content : typeof first?.text === 'string' ? first.text : '';
    if (!hasUsageKey && !hadGroqUsage) return [{ kind: 'chunk', json: data, text }];
    // OpenAI ends every chunk with `"usage":null` once usage is asked for: cut it as text rather than
    // re-serialising the chunk (the costliest step of relaying a stream). Ending the object, it is top-level.
    if (!hadGroqUsage && chunk.usage === null && endsWithUsageNull(data)) {
      return [{ kind: 'chunk', json: withoutUsageNull(data), text }];
    }
    delete chunk.usage;
    return [{ kind: 'chunk', json: JSON.stringify(chunk), text }];
  }

  finish(): StreamPiece[] {
    if (this.ended) return [];
    // Some OpenAI-compatible servers close without [DONE]: the answer is whole if a finish or usage arrived.
    // Without either, the connection broke mid-answer, and the client must not take what it got for all of it.
    if (this.finished || this.usage !== null) return this.complete();
    this.ended = true;
    return [{ kind: 'error', failure: endedEarly() }];
  }

  private complete(): StreamPiece[] {
    this.ended = true;
    const pieces: StreamPiece[] = [];
    if (this.usage && this.usageChunk) {
      pieces.push({ kind: 'usage', usage: this.usage, chunk: this.usageChunk, ...(this.usageText === null ? {} : { text: this.usageText }) });
    }
    pieces.push({ kind: 'end' });
    return pieces;
  }
}
