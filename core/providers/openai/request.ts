/** OpenAI-compatible request mapping: the body passes through, with the gateway's few rewrites. */
import { joinUrl } from '../base-url.ts';
import type { CallContext, ChatRequest, PassthroughBody, UpstreamRequest } from '../types.ts';

/** Body fields the gateway consumes and never forwards (keys identify end users). */
const DROPPED_FIELDS = new Set(['user']);

export function openAIHeaders(apiKey: string | null): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return headers;
}

/** Whether this provider is known to reject `stream_options` (learned at run time, see chat pipeline). */
export const rejectsStreamOptions = (ctx: CallContext): boolean => ctx.provider.options.streamOptions === false;

/** Also the body of legacy completions: the same field rules (model, `user`, `stream_options`) apply. */
export function openAIChatBody(body: Record<string, unknown>, ctx: CallContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in body) if (!DROPPED_FIELDS.has(k)) out[k] = body[k];
  out.model = ctx.model;
  if (ctx.stream) {
    out.stream = true;
    if (rejectsStreamOptions(ctx)) delete out.stream_options;
    else {
      // Always ask for usage: costs come from the upstream's own count; the client's wish is honoured on the way back.
      const client = body.stream_options && typeof body.stream_options === 'object' ? body.stream_options : {};
      out.stream_options = { ...client, include_usage: true };
    }
  } else {
    delete out.stream_options;
  }
  return out;
}

export function openAIChatRequest(body: ChatRequest, ctx: CallContext, path = '/chat/completions'): UpstreamRequest {
  const text = (ctx.bodyText !== undefined ? clientChatText(body, ctx.bodyText, ctx) : null) ?? JSON.stringify(openAIChatBody(body, ctx));
  const request: UpstreamRequest = { method: 'POST', url: joinUrl(ctx.provider.baseUrl, path), headers: openAIHeaders(ctx.apiKey), body: text };
  // The client's bytes as they came: no second UTF-8 encoding of the body (100 KB prompts every agent turn).
  if (text === ctx.bodyText && ctx.bodyBytes !== undefined) request.bodyBytes = ctx.bodyBytes;
  return request;
}

/**
 * The client's own text of `body` when `openAIChatBody` would change nothing but add `stream_options`
 * (spliced in before the closing brace): the common call then costs no re-serialisation (a 100 KB prompt
 * ~100 µs). Null when a rewrite applies (another model name, `user`, `stream_options` to change or drop).
 */
export function clientChatText(body: ChatRequest, text: string, ctx: CallContext): string | null {
  if (body.model !== ctx.model) return null;
  for (const k of DROPPED_FIELDS) if (k in body) return null;
  const hasOptions = 'stream_options' in body;
  if (!ctx.stream) return body.stream === true || hasOptions ? null : text;
  if (body.stream !== true) return null;
  if (rejectsStreamOptions(ctx)) return hasOptions ? null : text;
  if (hasOptions) {
    // The client's own `{ include_usage: true, ... }` is what the rewrite would send anyway.
    const o = body.stream_options;
    return o !== null && typeof o === 'object' && !Array.isArray(o) && (o as Record<string, unknown>).include_usage === true ? text : null;
  }
  const end = text.lastIndexOf('}');
  // The body is a non-empty object (it has `model`), so a member can follow its last one.
  if (end === -1 || text.slice(end + 1).trim() !== '') return null;
  return `${text.slice(0, end)},"stream_options":{"include_usage":true}}`;
}

/** A pass-through request (completions, images, audio): the client's body with the provider's model name. */
export function openAIPassthroughRequest(url: string, headers: Record<string, string>, body: PassthroughBody, wireModel: string): UpstreamRequest {
  const built = body.build(wireModel);
  const h = { ...headers, 'content-type': body.contentType };
  return typeof built === 'string' ? { method: 'POST', url, headers: h, body: built } : { method: 'POST', url, headers: h, bodyBytes: built };
}
