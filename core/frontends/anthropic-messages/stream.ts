/**
 * Neutral events → Anthropic's named SSE events. Blocks are strictly sequential with their own
 * indices; parallel tool calls (whose argument fragments may interleave upstream) stream the first one
 * live and send the others whole once it closes. Reasoning becomes a `thinking` block, signed only with
 * a signature Anthropic itself made; pings keep a silent upstream from looking dead.
 */
import type { GatewayError } from '../../errors.ts';
import { stringifyWithCost } from '../../pricing/cost.ts';
import type { CallEvent, FinishReason } from '../../pipeline/call-model.ts';
import type { ResponseMeta, StreamEnd, StreamRenderer } from '../../pipeline/front-end.ts';
import { encodeToolId } from '../opaque.ts';
import { errorType } from './errors.ts';
import { anthropicUsage, GATEWAY_SIGNATURE, messageId, stopReason } from './render.ts';

const sse = (name: string, payload: Record<string, unknown>): string => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...payload })}\n\n`;

/** The final `message_delta`: its usage carries `cost` when the call is priced, as chat's usage chunk does. */
function messageDelta(stop: string | null, info: StreamEnd): string {
  const usage: Record<string, unknown> = anthropicUsage(info.usage);
  return `event: message_delta\ndata: ${stringifyWithCost({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage }, usage, info.costUsd)}\n\n`;
}

export const PING = 'event: ping\ndata: {"type": "ping"}\n\n';

type Open = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; index: number } | null;

export class AnthropicStreamRenderer implements StreamRenderer {
  private readonly meta: ResponseMeta;
  private started = false;
  private next = 0;
  private open: Open = null;
  private finish: FinishReason | null = null;
  /** Tool calls waiting for the live one to close: index → start and arguments so far. */
  private readonly waiting = new Map<number, { id: string; name: string; args: string }>();
  private readonly done = new Set<number>();
  /** True once the upstream's own Anthropic events are being relayed (pass-through): the stream is theirs to end. */
  private native = false;
  /** Whether the open thinking block carries Anthropic's own signature. */
  private signed = false;

  constructor(meta: ResponseMeta) {
    this.meta = meta;
  }

  event(e: CallEvent): string {
    if (e.type !== 'start' && e.type !== 'ping' && 'choice' in e && e.choice !== 0) return '';
    switch (e.type) {
      case 'start':
        return this.start(e.id);
      case 'text-delta':
        return this.start('') + this.ensure({ kind: 'text' }) + this.delta({ type: 'text_delta', text: e.text });
      case 'reasoning-delta':
        return this.start('') + this.ensure({ kind: 'thinking' }) + this.delta({ type: 'thinking_delta', thinking: e.text });
      case 'reasoning-opaque':
        // Another provider's reasoning data is never passed off as an Anthropic signature.
        if (e.opaque.origin !== 'anthropic') return '';
        if (e.redacted) return this.start('') + this.close() + this.whole({ type: 'redacted_thinking', data: e.opaque.value });
        this.signed = true;
        return this.start('') + this.ensure({ kind: 'thinking' }) + this.delta({ type: 'signature_delta', signature: e.opaque.value });
      case 'tool-call-start':
        if (this.open?.kind === 'tool' || this.waiting.size > 0) {
          this.waiting.set(e.index, { id: encodeToolId(e.id, e.opaque), name: e.name, args: '' });
          return '';
        }
        return this.start('') + this.close() + this.blockStart({ type: 'tool_use', id: encodeToolId(e.id, e.opaque), name: e.name, input: {} }, { kind: 'tool', index: e.index });
      case 'tool-call-delta': {
        const w = this.waiting.get(e.index);
        if (w) {
          w.args += e.argumentsDelta;
          return '';
        }
        if (this.open?.kind === 'tool' && this.open.index === e.index) return this.delta({ type: 'input_json_delta', partial_json: e.argumentsDelta });
        return '';
      }
      case 'block-end':
        return this.close() + this.flushWaiting();
      case 'finish':
        this.finish = e.reason;
        return this.close() + this.flushWaiting();
      case 'ping':
        return this.started ? PING : '';
      default:
        return '';
    }
  }

  raw(data: string, event: string | undefined): string {
    this.native = true;
    return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
  }

  end(info: StreamEnd): string {
    if (this.native) return '';
    return (
      this.start('') +
      this.close() +
      this.flushWaiting() +
      messageDelta(stopReason(this.finish), info) +
      sse('message_stop', {})
    );
  }

  error(err: GatewayError): string {
    const { type } = errorType(err);
    return sse('error', { error: { type, message: err.message } });
  }

  keepAlive(): string | null {
    return PING;
  }

  private start(id: string): string {
    if (this.started) return '';
    this.started = true;
    return sse('message_start', {
      message: {
        id: messageId(id),
        type: 'message',
        role: 'assistant',
        model: this.meta.requestedModel,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
      },
    });
  }

  private ensure(want: Exclude<Open, null>): string {
    if (this.open?.kind === want.kind) return '';
    const block = want.kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    return this.close() + this.blockStart(block, want);
  }

  private blockStart(block: Record<string, unknown>, open: Exclude<Open, null>): string {
    this.open = open;
    return sse('content_block_start', { index: this.next, content_block: block });
  }

  private delta(delta: Record<string, unknown>): string {
    return sse('content_block_delta', { index: this.next, delta });
  }

  private close(): string {
    if (this.open === null) return '';
    if (this.open.kind === 'tool') this.done.add(this.open.index);
    // Another provider's reasoning gets the gateway's own mark, never a fake Anthropic signature: the
    // gateway recognises it when the client sends the block back (DeepSeek-style upstreams need the text
    // again; Anthropic must never see it).
    const mark = this.open.kind === 'thinking' && !this.signed ? this.delta({ type: 'signature_delta', signature: GATEWAY_SIGNATURE }) : '';
    this.signed = false;
    this.open = null;
    return mark + sse('content_block_stop', { index: this.next++ });
  }

  private whole(block: Record<string, unknown>): string {
    const out = sse('content_block_start', { index: this.next, content_block: block }) + sse('content_block_stop', { index: this.next });
    this.next++;
    return out;
  }

  private flushWaiting(): string {
    if (this.open?.kind === 'tool' || this.waiting.size === 0) return '';
    let out = '';
    for (const [index, w] of [...this.waiting].sort((a, b) => a[0] - b[0])) {
      out += sse('content_block_start', { index: this.next, content_block: { type: 'tool_use', id: w.id, name: w.name, input: {} } });
      if (w.args !== '') out += this.delta({ type: 'input_json_delta', partial_json: w.args });
      out += sse('content_block_stop', { index: this.next++ });
      this.done.add(index);
    }
    this.waiting.clear();
    return out;
  }
}
