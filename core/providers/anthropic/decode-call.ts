/**
 * Anthropic answers → the neutral model. Thinking keeps its signature (`opaque`, origin `anthropic`)
 * so it can go back to Anthropic unchanged; redacted thinking keeps its data the same way.
 */
import type { CallEvent, CallResult, ContentPart, FinishReason } from '../../pipeline/call-model.ts';
import type { Frame, FrameDecoder, SseEvent } from '../types.ts';
import type { Usage } from '../../usage.ts';
import { streamErrorFailure } from './errors.ts';
import { AnthropicUsageTally, fromAnthropicUsage } from './usage.ts';
import type { AnthropicUsage } from './wire.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const UNIFIED: Record<string, FinishReason['unified']> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
  pause_turn: 'pause',
};

export const anthropicFinish = (raw: unknown): FinishReason => {
  const r = typeof raw === 'string' ? raw : null;
  return { unified: r === null ? 'stop' : (UNIFIED[r] ?? 'other'), raw: r };
};

export function decodeAnthropicResult(json: unknown, fallbackModel: string): CallResult {
  const res = isObj(json) ? json : {};
  const content: ContentPart[] = [];
  for (const b of Array.isArray(res.content) ? res.content.filter(isObj) : []) {
    if (b.type === 'text' && typeof b.text === 'string') content.push({ type: 'text', text: b.text });
    else if (b.type === 'thinking') {
      content.push({ type: 'reasoning', text: String(b.thinking ?? ''), ...(typeof b.signature === 'string' && b.signature !== '' ? { opaque: { origin: 'anthropic', value: b.signature } } : {}) });
    } else if (b.type === 'redacted_thinking') {
      content.push({ type: 'reasoning', text: '', redacted: true, opaque: { origin: 'anthropic', value: String(b.data ?? '') } });
    } else if (b.type === 'tool_use') {
      content.push({ type: 'tool-call', id: String(b.id), name: String(b.name), arguments: JSON.stringify(b.input ?? {}), kind: 'function' });
    }
  }
  return {
    id: typeof res.id === 'string' ? res.id : '',
    model: typeof res.model === 'string' ? res.model : fallbackModel,
    created: Math.floor(Date.now() / 1000),
    choices: [{ content, finish: anthropicFinish(res.stop_reason) }],
    usage: isObj(res.usage) ? fromAnthropicUsage(res.usage as AnthropicUsage) : null,
  };
}

type BlockKind = 'text' | 'thinking' | 'redacted' | 'tool' | 'other';

/** Anthropic's named events → neutral events. Tool calls are numbered 0, 1, … in arrival order. */
export class AnthropicFrameDecoder implements FrameDecoder {
  private readonly usage = new AnthropicUsageTally();
  private done = false;
  private finished = false;
  private readonly blocks = new Map<number, { kind: BlockKind; tool?: number }>();
  private tools = 0;
  private readonly fallbackModel: string;

  constructor(fallbackModel: string) {
    this.fallbackModel = fallbackModel;
  }

  push(ev: SseEvent): Frame[] {
    if (this.done) return [];
    if (ev.event === 'ping') return [{ kind: 'event', event: { type: 'ping' } }];
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      this.done = true;
      return [{ kind: 'error', failure: ev.event === 'error' ? streamErrorFailure(ev.data) : { status: 502, message: 'Anthropic sent a malformed stream event.', type: 'api_error', code: null } }];
    }
    if (!isObj(data)) return [];
    const name = ev.event ?? (typeof data.type === 'string' ? data.type : '');
    const out: Frame[] = [];
    const e = (event: CallEvent) => out.push({ kind: 'event', event });
    switch (name) {
      case 'message_start': {
        const m = isObj(data.message) ? data.message : {};
        this.usage.add(m.usage);
        e({ type: 'start', id: typeof m.id === 'string' ? m.id : '', model: typeof m.model === 'string' && m.model !== '' ? m.model : this.fallbackModel });
        break;
      }
      case 'content_block_start': {
        const b = isObj(data.content_block) ? data.content_block : {};
        const index = typeof data.index === 'number' ? data.index : this.blocks.size;
        if (b.type === 'text') {
          this.blocks.set(index, { kind: 'text' });
          if (typeof b.text === 'string' && b.text !== '') e({ type: 'text-delta', choice: 0, text: b.text });
        } else if (b.type === 'thinking') this.blocks.set(index, { kind: 'thinking' });
        else if (b.type === 'redacted_thinking') {
          this.blocks.set(index, { kind: 'redacted' });
          e({ type: 'reasoning-opaque', choice: 0, opaque: { origin: 'anthropic', value: String(b.data ?? '') }, redacted: true });
        } else if (b.type === 'tool_use') {
          const k = this.tools++;
          this.blocks.set(index, { kind: 'tool', tool: k });
          e({ type: 'tool-call-start', choice: 0, index: k, id: String(b.id), name: String(b.name), kind: 'function' });
        } else this.blocks.set(index, { kind: 'other' });
        break;
      }
      case 'content_block_delta': {
        const d = isObj(data.delta) ? data.delta : {};
        const blk = typeof data.index === 'number' ? this.blocks.get(data.index) : undefined;
        if (d.type === 'text_delta' && typeof d.text === 'string' && d.text !== '') e({ type: 'text-delta', choice: 0, text: d.text });
        else if (d.type === 'thinking_delta' && typeof d.thinking === 'string' && d.thinking !== '') e({ type: 'reasoning-delta', choice: 0, text: d.thinking });
        else if (d.type === 'signature_delta' && typeof d.signature === 'string') e({ type: 'reasoning-opaque', choice: 0, opaque: { origin: 'anthropic', value: d.signature } });
        else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string' && d.partial_json !== '' && blk?.kind === 'tool') {
          e({ type: 'tool-call-delta', choice: 0, index: blk.tool ?? 0, argumentsDelta: d.partial_json });
        }
        break;
      }
      case 'content_block_stop': {
        const blk = typeof data.index === 'number' ? this.blocks.get(data.index) : undefined;
        if (blk && blk.kind !== 'other') e({ type: 'block-end', choice: 0 });
        break;
      }
      case 'message_delta': {
        this.usage.add(data.usage);
        const d = isObj(data.delta) ? data.delta : {};
        if (!this.finished && d.stop_reason !== undefined && d.stop_reason !== null) {
          this.finished = true;
          e({ type: 'finish', choice: 0, reason: anthropicFinish(d.stop_reason) });
        }
        break;
      }
      case 'message_stop': {
        this.done = true;
        if (!this.finished) e({ type: 'finish', choice: 0, reason: anthropicFinish(null) });
        const usage = this.usage.current();
        if (usage !== null) out.push({ kind: 'usage', usage });
        out.push({ kind: 'end' });
        break;
      }
      case 'error':
        this.done = true;
        out.push({ kind: 'error', failure: streamErrorFailure(ev.data) });
        break;
      default:
        break;
    }
    return out;
  }

  finish(): Frame[] {
    if (this.done) return [];
    this.done = true;
    return [{ kind: 'error', failure: { status: 502, message: 'The Anthropic stream ended early, before message_stop.', type: 'api_error', code: null } }];
  }

  usageSoFar(): Usage | null {
    return this.usage.current();
  }
}
