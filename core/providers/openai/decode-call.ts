/**
 * OpenAI chat answers → the neutral model: a `chat.completion` into a `CallResult`, and chunks into
 * `CallEvent`s (reasoning_content / reasoning deltas, text, tool-call deltas, finish, usage).
 */
import { randomUUID } from 'node:crypto';
import { fromOpenAIUsage } from '../../usage.ts';
import type { Usage } from '../../usage.ts';
import type { CallEvent, CallResult, ContentPart, FinishReason, OpaqueData } from '../../pipeline/call-model.ts';
import type { Frame, FrameDecoder, SseEvent } from '../types.ts';
import { PlainChunkReader } from './chunk-text.ts';
import { endedEarly, failureFromErrorObject } from './errors.ts';
import { thoughtSignatureOf } from '../gemini/tool-ids.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const FINISH: Record<string, FinishReason['unified']> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
};

export const openAIFinish = (raw: unknown): FinishReason => {
  const r = typeof raw === 'string' ? raw : null;
  return { unified: r === null ? 'stop' : (FINISH[r] ?? 'other'), raw: r };
};

/**
 * Gemini's thought signature on a tool call (Google's OpenAI compatibility, and the Gemini adapter's own
 * translation, put it in `extra_content.google.thought_signature`): it must reach Gemini again.
 */
const signatureOf = (t: Obj): { opaque?: OpaqueData } => {
  const sig = thoughtSignatureOf(t);
  return sig === undefined ? {} : { opaque: { origin: 'gemini', value: sig } };
};

/** DeepSeek and others say `reasoning_content`; OpenRouter and vLLM `reasoning`. */
const reasoningOf = (o: Obj): string | null =>
  typeof o.reasoning_content === 'string' ? o.reasoning_content : typeof o.reasoning === 'string' ? o.reasoning : null;

export function decodeOpenAIResult(json: unknown, mapName: (n: string) => string): CallResult {
  const body = isObj(json) ? json : {};
  const choices = Array.isArray(body.choices) ? body.choices.filter(isObj) : [];
  return {
    id: typeof body.id === 'string' ? body.id : `chatcmpl-${randomUUID()}`,
    model: typeof body.model === 'string' ? body.model : '',
    created: typeof body.created === 'number' ? body.created : Math.floor(Date.now() / 1000),
    usage: fromOpenAIUsage(body.usage),
    choices: choices.map((c) => {
      const msg = isObj(c.message) ? c.message : {};
      const content: ContentPart[] = [];
      const reasoning = reasoningOf(msg);
      if (reasoning) content.push({ type: 'reasoning', text: reasoning });
      if (typeof msg.content === 'string' && msg.content !== '') content.push({ type: 'text', text: msg.content });
      if (typeof msg.refusal === 'string' && msg.refusal !== '') content.push({ type: 'text', text: msg.refusal });
      for (const t of Array.isArray(msg.tool_calls) ? msg.tool_calls.filter(isObj) : []) {
        const fn = isObj(t.function) ? t.function : {};
        content.push({
          type: 'tool-call',
          id: typeof t.id === 'string' ? t.id : `call_${randomUUID()}`,
          name: mapName(String(fn.name ?? '')),
          arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
          kind: 'function',
          ...signatureOf(t),
        });
      }
      return { content, finish: openAIFinish(c.finish_reason) };
    }),
  };
}

interface ChoiceState {
  /** The open block: 'text', 'reasoning', or a tool index. */
  open: 'text' | 'reasoning' | number | null;
  tools: Set<number>;
  finished: boolean;
}

/** OpenAI chunks → neutral events. Blocks are closed before the next opens; tool calls keep their index. */
export class OpenAIFrameDecoder implements FrameDecoder {
  private started = false;
  private ended = false;
  private usage: Usage | null = null;
  private readonly choices = new Map<number, ChoiceState>();
  private readonly plain = new PlainChunkReader();
  private readonly mapName: (n: string) => string;

  constructor(mapName: (n: string) => string = (n) => n) {
    this.mapName = mapName;
  }

  push(ev: SseEvent): Frame[] {
    if (this.ended) return [];
    if (ev.data === '[DONE]') return this.complete();
    // A plain content chunk of a started stream (one choice, no finish, no usage): its text, without a parse.
    const st0 = this.started ? this.choices.get(0) : undefined;
    const plain = st0 !== undefined ? this.plain.read(ev.data) : undefined;
    if (st0 !== undefined && plain !== undefined && !plain.finishes) {
      if (plain.text === '') return [];
      const out: Frame[] = [];
      this.switchTo(st0, 'text', 0, (event) => out.push({ kind: 'event', event }));
      out.push({ kind: 'event', event: { type: 'text-delta', choice: 0, text: plain.text } });
      return out;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(ev.data);
    } catch {
      return [{ kind: 'error', failure: { status: 502, message: 'The provider sent a malformed stream event.', type: 'api_error', code: 'malformed_stream' } }];
    }
    if (!isObj(chunk)) return [];
    if (chunk.error) {
      this.ended = true;
      return [{ kind: 'error', failure: failureFromErrorObject(502, chunk.error) }];
    }
    const out: Frame[] = [];
    const e = (event: CallEvent) => out.push({ kind: 'event', event });
    if (!this.started) {
      this.started = true;
      e({ type: 'start', id: typeof chunk.id === 'string' ? chunk.id : `chatcmpl-${randomUUID()}`, model: typeof chunk.model === 'string' ? chunk.model : '', created: typeof chunk.created === 'number' ? chunk.created : undefined });
    }
    for (const c of Array.isArray(chunk.choices) ? chunk.choices.filter(isObj) : []) {
      const i = typeof c.index === 'number' ? c.index : 0;
      let st = this.choices.get(i);
      if (!st) {
        st = { open: null, tools: new Set(), finished: false };
        this.choices.set(i, st);
      }
      const delta = isObj(c.delta) ? c.delta : {};
      const reasoning = reasoningOf(delta);
      if (reasoning) {
        this.switchTo(st, 'reasoning', i, e);
        e({ type: 'reasoning-delta', choice: i, text: reasoning });
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        this.switchTo(st, 'text', i, e);
        e({ type: 'text-delta', choice: i, text: delta.content });
      }
      for (const t of Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObj) : []) {
        const k = typeof t.index === 'number' ? t.index : st.tools.size;
        const fn = isObj(t.function) ? t.function : {};
        if (!st.tools.has(k)) {
          this.switchTo(st, k, i, e);
          st.tools.add(k);
          e({ type: 'tool-call-start', choice: i, index: k, id: typeof t.id === 'string' ? t.id : `call_${randomUUID()}`, name: this.mapName(String(fn.name ?? '')), kind: 'function', ...signatureOf(t) });
        }
        if (typeof fn.arguments === 'string' && fn.arguments !== '') e({ type: 'tool-call-delta', choice: i, index: k, argumentsDelta: fn.arguments });
      }
      if (c.finish_reason !== null && c.finish_reason !== undefined && !st.finished) {
        if (st.open !== null) e({ type: 'block-end', choice: i });
        st.open = null;
        st.finished = true;
        e({ type: 'finish', choice: i, reason: openAIFinish(c.finish_reason) });
      }
    }
    const usage = fromOpenAIUsage(chunk.usage) ?? (isObj(chunk.x_groq) ? fromOpenAIUsage(chunk.x_groq.usage) : null);
    if (usage) this.usage = usage;
    return out;
  }

  finish(): Frame[] {
    if (this.ended) return [];
    // Closed without [DONE]: whole if a choice finished or usage came; otherwise cut mid-answer (see stream.ts).
    if (this.usage !== null || [...this.choices.values()].some((st) => st.finished)) return this.complete();
    this.ended = true;
    return [{ kind: 'error', failure: endedEarly() }];
  }

  /** Parallel tool calls may interleave their argument fragments; the index names the block, so a renderer can buffer. */
  private switchTo(st: ChoiceState, block: 'text' | 'reasoning' | number, choice: number, e: (ev: CallEvent) => void): void {
    if (st.open === block) return;
    if (typeof block === 'number' && typeof st.open === 'number') {
      st.open = block;
      return;
    }
    if (st.open !== null) e({ type: 'block-end', choice });
    st.open = block;
  }

  private complete(): Frame[] {
    this.ended = true;
    const out: Frame[] = [];
    for (const [i, st] of this.choices) {
      if (st.finished) continue;
      if (st.open !== null) out.push({ kind: 'event', event: { type: 'block-end', choice: i } });
      out.push({ kind: 'event', event: { type: 'finish', choice: i, reason: { unified: 'stop', raw: null } } });
    }
    if (this.usage) out.push({ kind: 'usage', usage: this.usage });
    out.push({ kind: 'end' });
    return out;
  }
}
