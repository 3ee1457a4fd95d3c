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
import { customToolNames, unwrapCustom } from './custom-tools.ts';
import { mintId } from './ids.ts';
import { messageItem, reasoningCarrier, reasoningItem, responseIdFor, responseObject, signatureItem, terminalStatus, toolCallItem } from './response-object.ts';
import type { OutputItem, ResponseStatus } from './response-object.ts';

interface ToolState {
  /** The call's block index in the neutral events (parallel calls may interleave their deltas). */
  block: number;
  callId: string;
  name: string;
  toolKind: 'function' | 'custom';
  /** A custom tool that travelled as a function taking `{content}`: unwrapped once complete. */
  wrapped: boolean;
  args: string;
  /** Provider data the call carries (Gemini's thought signature), sent as a reasoning item before it. */
  opaque?: OpaqueData;
}

type OpenItem =
  | { kind: 'reasoning'; id: string; index: number; text: string; partOpen: boolean; opaque: OpaqueData | null; redacted: boolean }
  | { kind: 'message'; id: string; index: number; text: string }
  | ({ kind: 'tool'; id: string; index: number } & ToolState);

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
  private readonly custom: Set<string>;
  /** Tool calls that started while another was streaming: emitted whole after it. */
  private readonly held = new Map<number, ToolState>();
  /** Native pass-through: the upstream's own events are relayed; this tracks what a failure event needs. */
  private native: { lastSeq: number; responseId: string | null } | null = null;

  constructor(req: CallRequest, meta: ResponseMeta) {
    this.req = req;
    this.custom = customToolNames(req);
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
        const wrapped = e.kind === 'function' && this.custom.has(e.name);
        const t: ToolState = { block: e.index, callId: e.id, name: e.name, toolKind: wrapped ? 'custom' : e.kind, wrapped, args: '', ...(e.opaque ? { opaque: e.opaque } : {}) };
        if (this.open?.kind === 'tool') {
          this.held.set(e.index, t);
          return out;
        }
        out += this.closeOpen();
        return out + this.openTool(t);
      }
      case 'tool-call-delta': {
        const o = this.open;
        if (o?.kind === 'tool' && o.block === e.index) {
          o.args += e.argumentsDelta;
          if (o.wrapped || e.argumentsDelta === '') return out;
          const type = o.toolKind === 'function' ? 'response.function_call_arguments.delta' : 'response.custom_tool_call_input.delta';
          return out + this.emit(type, { item_id: o.id, output_index: o.index, delta: e.argumentsDelta });
        }
        const held = this.held.get(e.index);
        if (held) held.args += e.argumentsDelta;
        return out;
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
    if (this.native) return '';
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
    if (this.native) {
      // The upstream's stream broke before its terminal event: end it the way Responses clients understand.
      const n = this.native;
      const event = { type: 'response.failed', sequence_number: n.lastSeq + 1, response: { id: n.responseId ?? this.id, object: 'response', status: 'failed', output: [], error: { code: 'server_error', message: err.message } } };
      return `event: response.failed\ndata: ${JSON.stringify(event)}\n\n`;
    }
    if (this.finished) return '';
    return this.preamble() + this.failed(err.code ?? 'server_error', err.message);
  }

  /** A native frame, relayed as the upstream sent it. */
  raw(data: string, event: string | undefined): string {
    this.native ??= { lastSeq: -1, responseId: null };
    // JSON with or without spaces after its colons (Python's json.dumps writes them).
    const seq = /"sequence_number":\s*(\d+)/.exec(data);
    if (seq) this.native.lastSeq = Number(seq[1]);
    if (this.native.responseId === null) {
      const id = /"response":\s*\{\s*"id":\s*"([^"]+)"/.exec(data);
      if (id) this.native.responseId = id[1];
    }
    return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
  }

  keepAlive(): string | null {
    // An SSE comment: every client's parser skips it, and Codex's idle timer sees bytes.
    return ': keep-alive\n\n';
  }

  private failed(code: string, message: string): string {
    // The item cut mid-way is never announced done: Codex builds its history from `output_item.done`, and a
    // fragment closed as `completed` became an assistant turn of the retry (one more with each retry). Items
    // already done stay in the failed response's output; calls held back behind the cut one go with it.
    this.open = null;
    this.held.clear();
    let out = '';
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
      item = reasoningItem(o.id, o.redacted ? '' : o.text, reasoningCarrier(o.opaque, o.text));
    } else if (o.kind === 'message') {
      const base = { item_id: o.id, output_index: o.index, content_index: 0 };
      out += this.emit('response.output_text.done', { ...base, text: o.text, logprobs: [] });
      out += this.emit('response.content_part.done', { ...base, part: { type: 'output_text', text: o.text, annotations: [], logprobs: [] } });
      item = messageItem(o.id, o.text, 'completed');
    } else {
      const base = { item_id: o.id, output_index: o.index };
      if (o.toolKind === 'function') {
        out += this.emit('response.function_call_arguments.done', { ...base, name: o.name, arguments: o.args });
      } else {
        if (o.wrapped) {
          o.args = unwrapCustom(o.args);
          if (o.args !== '') out += this.emit('response.custom_tool_call_input.delta', { ...base, delta: o.args });
        }
        out += this.emit('response.custom_tool_call_input.done', { ...base, input: o.args });
      }
      item = toolCallItem(o.id, o.toolKind, o.callId, o.name, o.args, 'completed');
    }
    this.done.push(item);
    out += this.emit('response.output_item.done', { output_index: o.index, item });
    // Calls held back while this one streamed follow it, each whole.
    const next = this.held.values().next();
    if (!next.done) {
      this.held.delete(next.value.block);
      const args = next.value.args;
      next.value.args = '';
      out += this.openTool(next.value);
      out += this.event({ type: 'tool-call-delta', choice: 0, index: next.value.block, argumentsDelta: args });
      out += this.closeOpen();
    }
    return out;
  }

  private openTool(t: ToolState): string {
    let out = '';
    if (t.opaque) {
      const sig = signatureItem(t.opaque);
      const index = this.done.length;
      this.done.push(sig);
      out += this.emit('response.output_item.added', { output_index: index, item: sig });
      out += this.emit('response.output_item.done', { output_index: index, item: sig });
    }
    const item: OpenItem = { kind: 'tool', id: mintId(t.toolKind === 'function' ? 'fc' : 'ctc'), index: this.done.length, ...t };
    this.open = item;
    return out + this.emit('response.output_item.added', { output_index: item.index, item: toolCallItem(item.id, t.toolKind, t.callId, t.name, '', 'in_progress') });
  }

  private emit(type: string, fields: Record<string, unknown>): string {
    const data = JSON.stringify({ type, sequence_number: this.seq++, ...fields });
    return `event: ${type}\ndata: ${data}\n\n`;
  }
}
