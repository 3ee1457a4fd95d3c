/**
 * Gemini `streamGenerateContent?alt=sse` → OpenAI chunks. Every event is an unnamed
 * `data: <GenerateContentResponse>` holding the new parts only, and `usageMetadata` repeats running
 * totals. Gemini sends no terminal marker: the stream is complete when the connection closes after
 * every candidate has reported a `finishReason`, so usage and `end` come out of `finish()`.
 */
import { usagePiece } from '../usage-piece.ts';
import type { Usage } from '../../usage.ts';
import type { CallContext, SseEvent, StreamPiece, StreamTranslator, UpstreamFailure } from '../types.ts';
import { streamErrorFailure } from './errors.ts';
import { toFinishReason } from './finish-reason.ts';
import { candidateIndex, completionId, isPromptBlocked, nowSeconds, partsOf, responseModel, visibleText } from './response.ts';
import { toolCallFromPart } from './tool-ids.ts';
import { fromGeminiUsage } from './usage.ts';
import type { GeminiCandidate, GenerateContentResponse } from './wire.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

interface ChoiceState {
  started: boolean;
  finished: boolean;
  /** OpenAI numbers tool calls per choice from 0; Gemini delivers each call whole, in order. */
  nextToolIndex: number;
}

export class GeminiStreamTranslator implements StreamTranslator {
  private readonly ctx: CallContext;
  private opened = false;
  private id = '';
  private created = 0;
  private model = '';
  private readonly choices = new Map<number, ChoiceState>();
  private usage: Usage | null = null;
  private done = false;

  constructor(ctx: CallContext) {
    this.ctx = ctx;
  }

  push(event: SseEvent): StreamPiece[] {
    if (this.done) return [];
    const data = event.data.trim();
    if (data === '' || data === '[DONE]') return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return this.fail({ status: 502, message: 'Gemini sent a malformed stream event.', type: 'api_error', code: null });
    }
    if (!isObj(parsed)) return [];
    if (parsed.error !== undefined) return this.fail(streamErrorFailure(parsed));

    const json = parsed as GenerateContentResponse;
    this.open(json);
    const usage = fromGeminiUsage(json.usageMetadata);
    if (usage) this.usage = usage;

    const out: StreamPiece[] = [];
    const candidates = Array.isArray(json.candidates) ? json.candidates.filter(isObj) : [];
    if (candidates.length === 0 && isPromptBlocked(json)) {
      const state = this.state(0);
      out.push(...this.start(0, state));
      if (!state.finished) {
        state.finished = true;
        out.push(this.chunk(0, {}, 'content_filter'));
      }
      return out;
    }
    for (const c of candidates) this.candidate(c, candidateIndex(c), out);
    return out;
  }

  finish(): StreamPiece[] {
    if (this.done) return [];
    this.done = true;
    const states = [...this.choices.values()];
    if (states.length === 0 || states.some((s) => !s.finished)) {
      return [
        {
          kind: 'error',
          failure: {
            status: 502,
            message: 'The Gemini stream ended early, before a finishReason.',
            type: 'api_error',
            code: null,
          },
        },
      ];
    }
    const out: StreamPiece[] = [];
    if (this.usage) {
      out.push(usagePiece({ id: this.id, created: this.created, model: this.model }, this.usage));
    }
    out.push({ kind: 'end' });
    return out;
  }

  usageSoFar(): Usage | null {
    return this.usage;
  }

  private candidate(c: GeminiCandidate, index: number, out: StreamPiece[]): void {
    const state = this.state(index);
    // OpenAI clients stop reading a choice at its finish_reason; a late part has nowhere to go.
    if (state.finished) return;
    out.push(...this.start(index, state));
    let text = '';
    const flush = (): void => {
      if (text === '') return;
      out.push(this.chunk(index, { content: text }, null, text));
      text = '';
    };
    for (const part of partsOf(c)) {
      const t = visibleText(part);
      if (t !== null) {
        text += t;
        continue;
      }
      const call = isObj(part) ? toolCallFromPart(part) : null;
      // Gemini has no switch for parallel calls: past the first, a client that allowed one never sees them.
      if (call === null || (this.ctx.oneToolCall === true && state.nextToolIndex > 0)) continue;
      flush();
      // One delta with id, type, name and the whole arguments: Gemini never fragments `args`, and
      // the SDK stream helpers concatenate repeated strings, so nothing is ever sent twice.
      const toolDelta = { index: state.nextToolIndex++, ...call };
      out.push(this.chunk(index, { tool_calls: [toolDelta] }, null, call.function.arguments));
    }
    flush();
    if (typeof c.finishReason === 'string' && c.finishReason !== '') {
      state.finished = true;
      out.push(this.chunk(index, {}, toFinishReason(c.finishReason, state.nextToolIndex > 0)));
    }
  }

  private open(json: GenerateContentResponse): void {
    if (this.opened) return;
    this.opened = true;
    this.id = completionId(json.responseId);
    this.created = nowSeconds();
    this.model = responseModel(json, this.ctx);
  }

  private state(index: number): ChoiceState {
    let s = this.choices.get(index);
    if (!s) {
      s = { started: false, finished: false, nextToolIndex: 0 };
      this.choices.set(index, s);
    }
    return s;
  }

  /** openai-node's stream helper throws "missing role for choice" without this first delta. */
  private start(index: number, state: ChoiceState): StreamPiece[] {
    if (state.started) return [];
    state.started = true;
    return [this.chunk(index, { role: 'assistant', content: '' }, null)];
  }

  private chunk(index: number, delta: Obj, finishReason: string | null, text = ''): StreamPiece {
    const json = JSON.stringify({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index, delta, logprobs: null, finish_reason: finishReason }],
    });
    return { kind: 'chunk', json, text };
  }

  private fail(failure: UpstreamFailure): StreamPiece[] {
    this.done = true;
    return [{ kind: 'error', failure }];
  }
}
