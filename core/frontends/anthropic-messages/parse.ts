/**
 * An Anthropic Messages body → the neutral call. The body is also kept whole (`raw`) with the client's
 * `anthropic-*` headers, for the pass-through to an Anthropic upstream; the neutral parse serves the
 * translation to every other upstream.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ZodType } from 'zod';
import { badRequest } from '../../errors.ts';
import type { CacheControl, CallMessage, CallRequest, ContentPart, ImagePart, ReasoningRequest, TextPart, ToolDefinition } from '../../pipeline/call-model.ts';
import { forwardedAnthropicHeaders } from '../../providers/anthropic/passthrough.ts';
import { decodeToolId } from '../opaque.ts';
import { messagesSchema } from './schema.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const KNOWN = new Set(['model', 'max_tokens', 'messages', 'system', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'thinking', 'tools', 'tool_choice', 'metadata', 'cache_control', 'service_tier']);

/** Runs a zod schema and turns its first complaint into Anthropic's 400 naming the field. */
export function check<T>(schema: ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue.path.join('.');
  if (issue.code !== 'invalid_type') throw badRequest(`${where}: ${issue.message}`, 'invalid_value', where || null);
  // zod does not keep the input it refused: the body itself says whether the field is absent or of the wrong type.
  if (valueAt(body, issue.path) === undefined) throw badRequest(`${where}: Field required`, 'missing_parameter', where || null);
  throw badRequest(`${where}: Input should be a valid ${PYDANTIC_TYPE[issue.expected] ?? issue.expected}`, 'invalid_type', where || null);
}

/** Anthropic's API (pydantic) names the types it expected so. */
const PYDANTIC_TYPE: Record<string, string> = { number: 'number', int: 'integer', string: 'string', array: 'list', object: 'dictionary', boolean: 'boolean' };

function valueAt(body: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = body;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

const cacheControl = (v: unknown): { cacheControl?: CacheControl } => (isObj(v) && v.type === 'ephemeral' ? { cacheControl: v as unknown as CacheControl } : {});

function image(b: Obj): ImagePart | null {
  const s = isObj(b.source) ? b.source : {};
  if (s.type === 'base64' && typeof s.data === 'string') return { type: 'image', source: { kind: 'base64', mediaType: String(s.media_type ?? 'image/png'), data: s.data }, ...cacheControl(b.cache_control) };
  if (s.type === 'url' && typeof s.url === 'string') return { type: 'image', source: { kind: 'url', url: s.url }, ...cacheControl(b.cache_control) };
  return null;
}

function text(b: Obj): TextPart {
  return { type: 'text', text: typeof b.text === 'string' ? b.text : '', ...cacheControl(b.cache_control) };
}

function blocks(content: string | Obj[]): Obj[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function part(b: Obj): ContentPart | null {
  switch (b.type) {
    case 'text':
      return text(b);
    case 'image':
      return image(b);
    case 'tool_use': {
      const { id, opaque } = decodeToolId(String(b.id ?? ''));
      return { type: 'tool-call', id, name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}), kind: 'function', ...(opaque ? { opaque } : {}) };
    }
    case 'tool_result': {
      const c = b.content;
      const content: string | Array<TextPart | ImagePart> =
        typeof c === 'string' ? c : Array.isArray(c) ? c.filter(isObj).flatMap((x): Array<TextPart | ImagePart> => (x.type === 'text' ? [text(x)] : x.type === 'image' ? [image(x)].filter((i): i is ImagePart => i !== null) : [])) : '';
      return { type: 'tool-result', callId: decodeToolId(String(b.tool_use_id ?? '')).id, content, ...(b.is_error === true ? { isError: true } : {}), ...cacheControl(b.cache_control) };
    }
    case 'thinking': {
      // A signature is Anthropic's (only then may the block go back to Anthropic), or the gateway's own
      // `gw1:` mark on another provider's reasoning (which goes back to chat upstreams as reasoning_content).
      const raw = typeof b.signature === 'string' ? b.signature : '';
      const sig = raw.startsWith('gw1:') ? { opaque: { origin: 'gateway', value: raw } } : raw !== '' ? { opaque: { origin: 'anthropic', value: raw } } : {};
      return { type: 'reasoning', text: typeof b.thinking === 'string' ? b.thinking : '', ...sig };
    }
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', redacted: true, opaque: { origin: 'anthropic', value: String(b.data ?? '') } };
    default:
      // Documents, search results, server-tool blocks: kept as sent, for an upstream that speaks Anthropic.
      return { type: 'document', protocol: 'anthropic-messages', raw: b, ...cacheControl(b.cache_control) };
  }
}

function reasoning(body: Obj): ReasoningRequest | undefined {
  const t = isObj(body.thinking) ? body.thinking : null;
  const effort = isObj(body.output_config) && typeof body.output_config.effort === 'string' ? body.output_config.effort : undefined;
  const r: ReasoningRequest = {};
  if (t?.type === 'enabled') {
    r.enabled = true;
    if (typeof t.budget_tokens === 'number') r.budgetTokens = t.budget_tokens;
  } else if (t?.type === 'adaptive') r.enabled = true;
  if (effort) r.effort = (effort === 'max' ? 'xhigh' : effort) as ReasoningRequest['effort'];
  if (t && typeof t.display === 'string') r.summary = t.display;
  return r.enabled || r.effort ? r : undefined;
}

export function parseMessagesRequest(raw: Obj, headers: IncomingHttpHeaders): CallRequest {
  const body = check(messagesSchema, raw) as Obj & { model: string; max_tokens: number; messages: Array<{ role: 'user' | 'assistant' | 'system'; content: string | Obj[] }> };
  const system: TextPart[] = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : Array.isArray(body.system) ? body.system.filter(isObj).filter((b) => b.type === 'text').map(text) : [];
  const messages: CallMessage[] = body.messages.map((m) => ({ role: m.role, content: blocks(m.content).map(part).filter((p): p is ContentPart => p !== null) }));
  const tools: ToolDefinition[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools.filter(isObj) : []) {
    // Server tools (web search, code execution...) carry a versioned `type`; only Anthropic runs them.
    if (t.type !== undefined && t.type !== 'custom') continue;
    tools.push({
      kind: 'function',
      name: String(t.name ?? ''),
      ...(typeof t.description === 'string' ? { description: t.description } : {}),
      ...(isObj(t.input_schema) ? { parameters: t.input_schema } : {}),
      ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}),
      ...cacheControl(t.cache_control),
    });
  }
  const tc = isObj(body.tool_choice) ? body.tool_choice : null;
  const toolChoice: CallRequest['toolChoice'] =
    tc?.type === 'any' ? { type: 'required' } : tc?.type === 'tool' && typeof tc.name === 'string' ? { type: 'tool', name: tc.name } : tc?.type === 'none' ? { type: 'none' } : tc?.type === 'auto' ? { type: 'auto' } : undefined;
  const extra: Obj = {};
  for (const k in body) if (!KNOWN.has(k)) extra[k] = body[k];
  const r = reasoning(body);
  const stop = Array.isArray(body.stop_sequences) ? body.stop_sequences.filter((s): s is string => typeof s === 'string') : [];
  return {
    inbound: 'anthropic-messages',
    model: body.model,
    system,
    messages,
    tools,
    ...(toolChoice ? { toolChoice } : {}),
    ...(tc?.disable_parallel_tool_use === true ? { parallelToolCalls: false } : {}),
    maxOutputTokens: body.max_tokens,
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === 'number' ? { topP: body.top_p } : {}),
    ...(typeof body.top_k === 'number' ? { topK: body.top_k } : {}),
    ...(stop.length > 0 ? { stop } : {}),
    n: 1,
    ...(r ? { reasoning: r } : {}),
    stream: body.stream === true,
    streamUsage: true,
    ...(typeof body.service_tier === 'string' ? { serviceTier: body.service_tier } : {}),
    ...(isObj(body.cache_control) && body.cache_control.type === 'ephemeral' ? { cacheControl: body.cache_control as unknown as CacheControl } : {}),
    extra,
    forwardHeaders: forwardedAnthropicHeaders(headers),
    raw: body,
  };
}

