/**
 * Anthropic Messages to an Anthropic upstream: the client's body goes through with only `model`
 * rewritten (and foreign, unsigned thinking blocks removed, which Anthropic would reject), every
 * `anthropic-*` header the client sent is forwarded, and the stream is relayed event by event while
 * usage is read on the side.
 */
import type { CallContext, Frame, FrameDecoder, SseEvent, UpstreamRequest } from '../types.ts';
import type { Usage } from '../../usage.ts';
import { streamErrorFailure } from './errors.ts';
import { AnthropicUsageTally } from './usage.ts';
import { anthropicBase, anthropicHeaders } from './request.ts';
import { STRING_BODY, decodeStringBody } from '../plain-json-string.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A thinking block Anthropic did not sign (another provider's, or shown without a signature) cannot go back to it. */
const foreignThinking = (b: unknown): boolean =>
  isObj(b) && b.type === 'thinking' && (typeof b.signature !== 'string' || b.signature === '' || b.signature.startsWith('gw1:'));

function withoutForeignThinking(messages: unknown): unknown {
  if (!Array.isArray(messages)) return messages;
  let changed = false;
  const out = messages.map((m) => {
    if (!isObj(m) || m.role !== 'assistant' || !Array.isArray(m.content) || !m.content.some(foreignThinking)) return m;
    changed = true;
    return { ...m, content: m.content.filter((b) => !foreignThinking(b)) };
  });
  return changed ? out : messages;
}

/** The client's headers an Anthropic upstream must see: every `anthropic-*` one, as an open list. */
export function forwardedAnthropicHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (!name.startsWith('anthropic-') || v === undefined) continue;
    out[name] = Array.isArray(v) ? v.join(',') : v;
  }
  return out;
}

export function anthropicPassthroughRequest(raw: Record<string, unknown>, forward: Record<string, string>, ctx: CallContext, path = '/v1/messages'): UpstreamRequest {
  const messages = 'messages' in raw ? withoutForeignThinking(raw.messages) : undefined;
  // Nothing to rewrite (same model, no foreign thinking): the client's own bytes go, not a re-serialisation.
  const asSent = ctx.bodyText !== undefined && raw.model === ctx.model && messages === raw.messages;
  let text: string;
  if (asSent) text = ctx.bodyText as string;
  else {
    const body: Obj = { ...raw, model: ctx.model };
    if ('messages' in raw) body.messages = messages;
    text = JSON.stringify(body);
  }
  return {
    method: 'POST',
    url: `${anthropicBase(ctx.provider.baseUrl)}${path}`,
    headers: { ...anthropicHeaders(ctx.apiKey, true), ...forward, ...(ctx.apiKey !== null ? { 'x-api-key': ctx.apiKey } : {}) },
    body: text,
  };
}

/** A text or tool-input delta as Anthropic writes it (nothing else in the event). */
const PLAIN_DELTA = new RegExp(`^\\{"type":"content_block_delta","index":\\d+,"delta":\\{"type":"(?:text_delta","text|input_json_delta","partial_json)":"${STRING_BODY}"\\}\\}$`);

/** Relays Anthropic's events as they are; reads usage from `message_start` and `message_delta`. */
export class AnthropicPassthroughDecoder implements FrameDecoder {
  private readonly usage = new AnthropicUsageTally();
  private done = false;

  push(ev: SseEvent): Frame[] {
    if (this.done) return [];
    const name = ev.event ?? '';
    if (name === 'error') {
      this.done = true;
      return [{ kind: 'error', failure: streamErrorFailure(ev.data), raw: { event: 'error', data: ev.data } }];
    }
    const raw = (good: boolean, text = ''): Frame => ({ kind: 'raw', data: ev.data, ...(ev.event !== null ? { event: ev.event } : {}), text, good });
    if (name === 'ping') return [raw(false)];
    // Only the events that carry usage or text are parsed; the rest go through untouched.
    if (name === 'message_start' || name === 'message_delta') {
      try {
        const data = JSON.parse(ev.data) as Obj;
        const u = name === 'message_start' ? (isObj(data.message) ? data.message.usage : undefined) : data.usage;
        this.usage.add(u);
      } catch {
        /* relayed anyway; the client sees what Anthropic sent */
      }
      return [raw(true)];
    }
    if (name === 'content_block_delta') {
      let text = '';
      // The usual delta, matched whole, has its text read without a parse.
      const m = PLAIN_DELTA.exec(ev.data);
      const plain = m === null ? undefined : decodeStringBody(m[1]);
      if (plain !== undefined) text = plain;
      else if (ev.data.includes('"text_delta"') || ev.data.includes('"input_json_delta"')) {
        try {
          const d = (JSON.parse(ev.data) as Obj).delta as Obj;
          text = typeof d?.text === 'string' ? d.text : typeof d?.partial_json === 'string' ? d.partial_json : '';
        } catch {
          /* relayed anyway */
        }
      }
      return [raw(true, text)];
    }
    if (name === 'message_stop') {
      this.done = true;
      const out: Frame[] = [raw(true)];
      const usage = this.usage.current();
    if (usage !== null) out.push({ kind: 'usage', usage });
      out.push({ kind: 'end' });
      return out;
    }
    return [raw(true)];
  }

  usageSoFar(): Usage | null {
    return this.usage.current();
  }

  finish(): Frame[] {
    if (this.done) return [];
    this.done = true;
    const out: Frame[] = [];
    const usage = this.usage.current();
    if (usage !== null) out.push({ kind: 'usage', usage });
    out.push({ kind: 'error', failure: { status: 502, message: 'The Anthropic stream ended early, before message_stop.', type: 'api_error', code: null } });
    return out;
  }
}
