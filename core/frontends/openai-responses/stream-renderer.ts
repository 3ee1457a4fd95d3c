/**
 * Neutral call events → the Responses event stream (C.4), in the order Codex and the SDKs require:
 * `response.created`, `response.in_progress`, then per output item `output_item.added`, its part and delta
 * events, `output_item.done` with the full item (Codex builds its history from these), and exactly one
 * terminal event (`response.completed`, `.incomplete` or `.failed`) whose response carries the whole
 * output and integer usage. Every event has `event:` and a `sequence_number` counting from 0.
 */
import type { GatewayError } from '../../errors.ts';
import type { CallEvent, CallRequest, FinishReason, OpaqueData } from '../../pipeline/call-model.ts';
import type { ResponseMeta, StreamEnd, StreamRenderer } from '../../pipeline/front-end.ts';
import type { Usage } from '../../usage.ts';
import { mintId } from './ids.ts';
import { encodeOpaque } from './opaque.ts';
import { messageItem, reasoningItem, responseIdFor, responseObject, terminalStatus, toolCallItem } from './response-object.ts';
import type { OutputItem, ResponseStatus } from './response-object.ts';

type OpenItem =
  | { kind: 'reasoning'; id: string; index: number; text: string; partOpen: boolean; opaque: OpaqueData | null; redacted: boolean }
  | { kind: 'message'; id: string; index: number; text: string }
  | { kind: 'tool'; id: string; index: number; toolKind: 'function' | 'custom'; callId: string; name: string; args: string };

/** Error codes Codex acts on (C.6); anything else reads as a retryable server error. */
const KNOWN_FAILURE_CODES = new Set(['rate_limit_exceeded', 'insufficient_quota', 'context_length_exceeded', 'invalid_prompt', 'server_error']);

export class ResponsesStreamRenderer implements StreamRenderer {
  private seq = 0;
  private started = false;
  private finished = false;
  private open: OpenItem | null = null;
  private readonly done: OutputItem[] = [];
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private readonly id: string;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private model: string;
  private readonly req: CallRequest;

  constructor(req: CallRequest, meta: ResponseMeta) {
    this.req = req;
    this.id = responseIdFor(meta.requestId);
    this.model = meta.model || meta.requestedModel;
  }

  event(e: CallEvent): string {
    if (this.finished) return '';
    let out = this.preamble();
    switch (e.type) {
      case 'start':
        return out;
      case 'reasoning-delta': {
        const r = this.openReasoning();
        out += r.text;
        if (!r.item.partOpen) {
          r.item.partOpen = true;
          out += this.emit('response.reasoning_summary_part.added', { item_id: r.item.id, output_index: r.item.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
        }
        r.item.text += e.text;
        return out + this.emit('response.reasoning_summary_text.delta', { item_id: r.item.id, output_index: r.item.index, summary_index: 0, delta: e.text });
      }
      case 'reasoning-opaque': {
        const r = this.openReasoning();
        r.item.opaque = e.opaque;
        if (e.redacted) r.item.redacted = true;
        return out + r.text;
      }
      case 'text-delta': {
        if (this.open?.kind !== 'message') {
          out += this.closeOpen();
          const item = { kind: 'message' as const, id: mintId('msg'), index: this.done.length, text: '' };
          this.open = item;
          out += this.emit('response.output_item.added', { output_index: item.index, item: messageItem(item.id, '', 'in_progress') });
          out += this.emit('response.content_part.added', { item_id: item.id, output_index: item.index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
        }
        const m = this.open as Extract<OpenItem, { kind: 'message' }>;
        m.text += e.text;
        return out + this.emit('response.output_text.delta', { item_id: m.id, output_index: m.index, content_index: 0, delta: e.text, logprobs: [] });
      }
      case 'tool-call-start': {
        out += this.closeOpen();
        const item: OpenItem = { kind: 'tool', id: mintId(e.kind === 'function' ? 'fc' : 'ctc'), index: this.done.length, toolKind: e.kind, callId: e.id, name: e.name, args: '' };
        this.open = item;
        return out + this.emit('response.output_item.added', { output_index: item.index, item: toolCallItem(item.id, e.kind, e.id, e.name, '', 'in_progress') });
      }
      case 'tool-call-delta': {
        const t = this.open;
        if (t?.kind !== 'tool' || e.argumentsDelta === '') return out;
        t.args += e.argumentsDelta;
        const type = t.toolKind === 'function' ? 'response.function_call_arguments.delta' : 'response.custom_tool_call_input.delta';
        return out + this.emit(type, { item_id: t.id, output_index: t.index, delta: e.argumentsDelta });
      }
      case 'block-end':
        return out + this.closeOpen();
      case 'finish':
        this.finish = e.reason;
        return out + this.closeOpen();
      case 'usage':
        this.usage = e.usage;
        return out;
      case 'ping':
        return out;
      case 'error':
        return out + this.failed(e.code ?? 'server_error', e.message);
    }
  }

  end(info: StreamEnd): string {
    if (this.finished) return '';
    let out = this.preamble() + this.closeOpen();
    this.finished = true;
    const { status, incomplete } = terminalStatus(this.finish);
    const usage = info.usage ?? this.usage;
    const type = status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    out += this.emit(type, { response: this.response(status, usage, info.costUsd, incomplete, null) });
    return out;
  }

  error(err: GatewayError): string {
    if (this.finished) return '';
    return this.preamble() + this.failed(err.code ?? 'server_error', err.message);
  }

  keepAlive(): string | null {
    // An SSE comment: every client's parser skips it, and Codex's idle timer sees bytes.
    return ': keep-alive\n\n';
  }

  private failed(code: string, message: string): string {
    let out = this.closeOpen();
    this.finished = true;
    const wire = KNOWN_FAILURE_CODES.has(code) ? code : 'server_error';
    out += this.emit('response.failed', { response: this.response('failed', this.usage, null, null, { code: wire, message }) });
    return out;
  }

  private response(status: ResponseStatus, usage: Usage | null, costUsd: number | null, incomplete: { reason: string } | null, error: { code: string; message: string } | null) {
    return responseObject({ id: this.id, createdAt: this.createdAt, model: this.model, status, output: this.done, usage, costUsd, incomplete, error, req: this.req });
  }

  private preamble(): string {
    if (this.started) return '';
    this.started = true;
    const shell = this.response('in_progress', null, null, null, null);
    return this.emit('response.created', { response: shell }) + this.emit('response.in_progress', { response: shell });
  }

  private openReasoning(): { item: Extract<OpenItem, { kind: 'reasoning' }>; text: string } {
    if (this.open?.kind === 'reasoning') return { item: this.open, text: '' };
    const text = this.closeOpen();
    const item = { kind: 'reasoning' as const, id: mintId('rs'), index: this.done.length, text: '', partOpen: false, opaque: null, redacted: false };
    this.open = item;
    return { item, text: text + this.emit('response.output_item.added', { output_index: item.index, item: reasoningItem(item.id, '', null) }) };
  }

  private closeOpen(): string {
    const o = this.open;
    if (!o) return '';
    this.open = null;
    let out = '';
    let item: OutputItem;
    if (o.kind === 'reasoning') {
      if (o.partOpen) {
        const base = { item_id: o.id, output_index: o.index, summary_index: 0 };
        out += this.emit('response.reasoning_summary_text.done', { ...base, text: o.text });
        out += this.emit('response.reasoning_summary_part.done', { ...base, part: { type: 'summary_text', text: o.text } });
      }
      item = reasoningItem(o.id, o.redacted ? '' : o.text, o.opaque ? encodeOpaque(o.opaque) : null);
    } else if (o.kind === 'message') {
      const base = { item_id: o.id, output_index: o.index, content_index: 0 };
      out += this.emit('response.output_text.done', { ...base, text: o.text, logprobs: [] });
      out += this.emit('response.content_part.done', { ...base, part: { type: 'output_text', text: o.text, annotations: [], logprobs: [] } });
      item = messageItem(o.id, o.text, 'completed');
    } else {
      const base = { item_id: o.id, output_index: o.index };
      out +=
        o.toolKind === 'function'
          ? this.emit('response.function_call_arguments.done', { ...base, name: o.name, arguments: o.args })
          : this.emit('response.custom_tool_call_input.done', { ...base, input: o.args });
      item = toolCallItem(o.id, o.toolKind, o.callId, o.name, o.args, 'completed');
    }
    this.done.push(item);
    return out + this.emit('response.output_item.done', { output_index: o.index, item });
  }

  private emit(type: string, fields: Record<string, unknown>): string {
    const data = JSON.stringify({ type, sequence_number: this.seq++, ...fields });
    return `event: ${type}\ndata: ${data}\n\n`;
  }
}
