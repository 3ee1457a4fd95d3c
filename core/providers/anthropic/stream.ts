import { usagePiece } from '../usage-piece.ts';
import type { Usage } from '../../usage.ts';
import type { SseEvent, StreamPiece, StreamTranslator, UpstreamFailure } from '../types.ts';
import { streamErrorFailure } from './errors.ts';
import { completionId, nowSeconds } from './response.ts';
import { toFinishReason } from './stop-reason.ts';
import { AnthropicUsageTally } from './usage.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const failurePiece = (failure: UpstreamFailure): StreamPiece => ({ kind: 'error', failure });

/**
 * Turns Anthropic's named stream events into OpenAI chunks. Anthropic numbers content blocks
 * (text, thinking and tools together) while OpenAI numbers tool calls alone, so tool blocks are
 * renumbered in arrival order.
 */
export class AnthropicStreamTranslator implements StreamTranslator {
  private readonly fallbackModel: string;
  private id = '';
  private created = 0;
  private model = '';
  private started = false;
  private finishSent = false;
  private done = false;
  private readonly usage = new AnthropicUsageTally();
  private readonly toolIndexByBlock = new Map<number, number>();

  constructor(fallbackModel: string) {
    this.fallbackModel = fallbackModel;
  }

  push(event: SseEvent): StreamPiece[] {
    if (this.done) return [];
    if (event.event === 'ping') return [];
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      if (event.event === 'error') return this.fail(streamErrorFailure(event.data));
      return this.fail({
        status: 502,
        message: `Anthropic sent a malformed \`${event.event ?? 'unnamed'}\` stream event.`,
        type: 'api_error',
        code: null,
      });
    }
    if (!isObj(data)) return [];
    // The event name is authoritative; `data.type` repeats it and covers a proxy that drops `event:` lines.
    const name = event.event ?? (typeof data.type === 'string' ? data.type : '');
    switch (name) {
      case 'message_start':
        return this.onMessageStart(data);
      case 'content_block_start':
        return this.onBlockStart(data);
      case 'content_block_delta':
        return this.onBlockDelta(data);
      case 'message_delta':
        return this.onMessageDelta(data);
      case 'message_stop':
        return this.onMessageStop();
      case 'error':
        return this.fail(streamErrorFailure(event.data));
      default:
        // content_block_stop and event types newer than this adapter carry nothing an OpenAI client sees.
        return [];
    }
  }

  finish(): StreamPiece[] {
    if (this.done) return [];
    return this.fail({
      status: 502,
      message: 'The Anthropic stream ended early, before message_stop.',
      type: 'api_error',
      code: null,
    });
  }

  private fail(failure: UpstreamFailure): StreamPiece[] {
    this.done = true;
    return [failurePiece(failure)];
  }

  private chunk(delta: Obj, finishReason: string | null, text = ''): StreamPiece {
    const json = JSON.stringify({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
    return { kind: 'chunk', json, text };
  }

  /** OpenAI clients need `role` in the first delta, even if a misbehaving upstream skipped message_start. */
  private start(message: Obj): StreamPiece[] {
    if (this.started) return [];
    this.started = true;
    this.id = completionId(message.id);
    this.created = nowSeconds();
    this.model = typeof message.model === 'string' && message.model !== '' ? message.model : this.fallbackModel;
    return [this.chunk({ role: 'assistant', content: '' }, null)];
  }

  usageSoFar(): Usage | null {
    return this.usage.current();
  }

  private onMessageStart(data: Obj): StreamPiece[] {
    const message = isObj(data.message) ? data.message : {};
    this.usage.add(message.usage);
    return this.start(message);
  }

  private onBlockStart(data: Obj): StreamPiece[] {
    const block = isObj(data.content_block) ? data.content_block : {};
    if (block.type !== 'tool_use' || typeof data.index !== 'number') return [];
    const k = this.toolIndexByBlock.size;
    this.toolIndexByBlock.set(data.index, k);
    return [
      ...this.start({}),
      this.chunk(
        { tool_calls: [{ index: k, id: String(block.id), type: 'function', function: { name: String(block.name), arguments: '' } }] },
        null,
      ),
    ];
  }

  private onBlockDelta(data: Obj): StreamPiece[] {
    const delta = isObj(data.delta) ? data.delta : {};
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') {
      return [...this.start({}), this.chunk({ content: delta.text }, null, delta.text)];
    }
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
      // Server-tool blocks (web search etc.) also stream input JSON; they have no OpenAI tool index.
      const k = typeof data.index === 'number' ? this.toolIndexByBlock.get(data.index) : undefined;
      if (k === undefined) return [];
      return [...this.start({}), this.chunk({ tool_calls: [{ index: k, function: { arguments: delta.partial_json } }] }, null)];
    }
    // thinking_delta / signature_delta / citations_delta: not representable in a chat chunk.
    return [];
  }

  private onMessageDelta(data: Obj): StreamPiece[] {
    this.usage.add(data.usage);
    if (this.finishSent) return [];
    const delta = isObj(data.delta) ? data.delta : {};
    this.finishSent = true;
    return [...this.start({}), this.chunk({}, toFinishReason(typeof delta.stop_reason === 'string' ? delta.stop_reason : null))];
  }

  private onMessageStop(): StreamPiece[] {
    const out = this.start({});
    // openai-node's stream helper throws when no chunk carries a finish_reason.
    if (!this.finishSent) out.push(this.chunk({}, 'stop'));
    const usage = this.usage.current();
    if (usage !== null) out.push(usagePiece({ id: this.id, created: this.created, model: this.model }, usage));
    out.push({ kind: 'end' });
    this.done = true;
    return out;
  }
}

export const chatStream = (model: string): StreamTranslator => new AnthropicStreamTranslator(model);
