/**
 * The native pass-through for upstreams that speak Responses (OpenAI, Azure): the client's body goes up
 * with only `model` rewritten; the answer comes back as the upstream wrote it. A stream is relayed event by
 * event, unchanged, while usage is read on the side from the terminal event (`response.completed`,
 * `.incomplete`, `.failed`). Until the first output event, a failure (an `error` event, `response.failed`)
 * still lets the call fail over; a stream cut before its terminal event is reported as an error.
 */
import type { UpstreamCodec } from '../../pipeline/codec.ts';
import { nativeResponsesRequest } from '../../providers/responses-native.ts';
import type { Frame, FrameDecoder, SseEvent } from '../../providers/types.ts';
import { fromResponsesUsage } from './usage.ts';

type Obj = Record<string, unknown>;

/** Lifecycle events that precede the answer: a provider failing after them can still be replaced. */
const PREAMBLE = new Set(['response.created', 'response.in_progress', 'response.queued']);
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The visible text of a Response object (for estimates when no usage came). */
export function responseText(response: Obj): string {
  let out = '';
  for (const item of Array.isArray(response.output) ? (response.output as Obj[]) : []) {
    if (typeof item.arguments === 'string') out += item.arguments;
    if (typeof item.input === 'string') out += item.input;
    for (const part of Array.isArray(item.content) ? (item.content as Array<{ text?: unknown }>) : []) if (typeof part.text === 'string') out += part.text;
  }
  return out;
}

class NativeResponsesFrames implements FrameDecoder {
  private ended = false;
  private answered = false;

  push(ev: SseEvent): Frame[] {
    if (this.ended) return [];
    let j: Obj;
    try {
      j = JSON.parse(ev.data) as Obj;
    } catch {
      // Not JSON (a `[DONE]` some proxies add): relayed as is, it means nothing to the accounting.
      return [{ kind: 'raw', data: ev.data, ...(ev.event !== null ? { event: ev.event } : {}), text: '', good: false }];
    }
    const type = typeof j.type === 'string' ? j.type : (ev.event ?? '');
    const raw = { ...(ev.event !== null ? { event: ev.event } : {}), data: ev.data };
    if (type === 'error' || (type === 'response.failed' && !this.answered)) {
      const err = (type === 'error' ? j : ((j.response as Obj | undefined)?.error ?? {})) as Obj;
      const inner = (typeof err.error === 'object' && err.error !== null ? err.error : err) as Obj;
      this.ended = true;
      return [{ kind: 'error', failure: { status: 502, message: String(inner.message ?? 'The provider reported an error.'), type: 'api_error', code: typeof inner.code === 'string' ? inner.code : 'upstream_error' }, raw }];
    }
    const text = typeof j.delta === 'string' ? j.delta : '';
    const good = !PREAMBLE.has(type);
    if (good) this.answered = true;
    const frames: Frame[] = [{ kind: 'raw', ...raw, text, good }];
    if (TERMINAL.has(type)) {
      const response = (j.response ?? {}) as Obj;
      const usage = fromResponsesUsage(response.usage);
      if (usage) frames.push({ kind: 'usage', usage, raw: response.usage as Obj });
      frames.push({ kind: 'end' });
      this.ended = true;
    }
    return frames;
  }

  finish(): Frame[] {
    if (this.ended) return [];
    this.ended = true;
    return [{ kind: 'error', failure: { status: 502, message: 'The provider closed the stream before its terminal event.', type: 'api_error', code: 'upstream_error' } }];
  }
}

export function nativeResponsesCodec(body: Obj): UpstreamCodec {
  return {
    request: (ctx) => nativeResponsesRequest(body, ctx),
    decode(json) {
      if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error('the provider answered with JSON that is not an object');
      const response = json as Obj;
      return {
        kind: 'native',
        usage: fromResponsesUsage(response.usage),
        text: responseText(response),
        render(end) {
          const u = response.usage;
          if (end.costUsd !== null && u !== null && typeof u === 'object') (u as Obj).cost = end.costUsd;
          return JSON.stringify(response);
        },
      };
    },
    frames: () => new NativeResponsesFrames(),
  };
}
