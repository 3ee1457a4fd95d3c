/**
 * An OpenAI chat completions body → the neutral call. The body itself is kept in `raw`: every
 * upstream that speaks chat (or is translated from it by its adapter) gets the client's fields.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CacheControl, CallMessage, CallRequest, ContentPart, TextPart, ToolDefinition } from '../../pipeline/call-model.ts';
import type { ChatRequest } from '../../providers/types.ts';
import { thoughtSignatureOf } from '../../providers/gemini/tool-ids.ts';
import { narrowToAllowed } from '../allowed-tools.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const KNOWN = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'n', 'seed',
  'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'reasoning_effort', 'service_tier', 'user',
]);

const cacheControl = (v: unknown): CacheControl | undefined => (isObj(v) && v.type === 'ephemeral' ? (v as unknown as CacheControl) : undefined);

function parts(content: unknown): ContentPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const out: ContentPart[] = [];
  for (const p of content) {
    if (!isObj(p)) continue;
    const cc = cacheControl(p.cache_control);
    if (p.type === 'text' && typeof p.text === 'string') out.push({ type: 'text', text: p.text, ...(cc ? { cacheControl: cc } : {}) });
    else if (p.type === 'image_url') {
      const img = p.image_url;
      const url = typeof img === 'string' ? img : isObj(img) && typeof img.url === 'string' ? img.url : '';
      const detail = isObj(img) && typeof img.detail === 'string' ? img.detail : undefined;
      out.push({ type: 'image', source: { kind: 'url', url }, ...(detail ? { detail } : {}), ...(cc ? { cacheControl: cc } : {}) });
    } else out.push({ type: 'document', protocol: 'openai-chat', raw: p });
  }
  return out;
}

const texts = (content: unknown): TextPart[] => parts(content).filter((p): p is TextPart => p.type === 'text');

/** The conversation and tools in the call model: only a translated call (an Anthropic upstream) reads them. */
function conversation(body: ChatRequest): Pick<CallRequest, 'system' | 'messages' | 'tools'> {
  const system: TextPart[] = [];
  const messages: CallMessage[] = [];
  for (const m of body.messages) {
    if (!isObj(m)) continue;
    if (m.role === 'system' || m.role === 'developer') system.push(...texts(m.content));
    else if (m.role === 'assistant') {
      const content = parts(m.content);
      for (const t of Array.isArray(m.tool_calls) ? m.tool_calls.filter(isObj) : []) {
        const fn = isObj(t.function) ? t.function : {};
        const sig = thoughtSignatureOf(t);
        content.push({ type: 'tool-call', id: String(t.id ?? ''), name: String(fn.name ?? ''), arguments: typeof fn.arguments === 'string' ? fn.arguments : '', kind: 'function', ...(sig !== undefined ? { opaque: { origin: 'gemini', value: sig } } : {}) });
      }
      if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '') content.unshift({ type: 'reasoning', text: m.reasoning_content });
      messages.push({ role: 'assistant', content });
    } else if (m.role === 'tool') {
      messages.push({ role: 'tool', content: [{ type: 'tool-result', callId: String(m.tool_call_id ?? ''), content: typeof m.content === 'string' ? m.content : texts(m.content) }] });
    } else messages.push({ role: 'user', content: parts(m.content), ...(typeof m.name === 'string' ? { name: m.name } : {}) });
  }
  const tools: ToolDefinition[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools.filter(isObj) : []) {
    const fn = isObj(t.function) ? t.function : {};
    tools.push({
      kind: 'function',
      name: String(fn.name ?? ''),
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      ...(isObj(fn.parameters) ? { parameters: fn.parameters } : {}),
      ...(typeof fn.strict === 'boolean' ? { strict: fn.strict } : {}),
    });
  }
  return { system, messages, tools };
}

export function parseChatRequest(body: ChatRequest, headers: IncomingHttpHeaders): CallRequest {
  const tc = body.tool_choice;
  let toolChoice: CallRequest['toolChoice'] =
    tc === 'auto' || tc === 'none' || tc === 'required' ? { type: tc } : isObj(tc) && isObj(tc.function) && typeof tc.function.name === 'string' ? { type: 'tool', name: tc.function.name } : undefined;
  // `allowed_tools` is checked (a 400 for a name no tool declares) and applied now: the conversation is built at once.
  let built: Pick<CallRequest, 'system' | 'messages' | 'tools'> | null = null;
  if (isObj(tc) && tc.type === 'allowed_tools') {
    built = conversation(body);
    const at = isObj(tc.allowed_tools) ? tc.allowed_tools : {};
    const names = (Array.isArray(at.tools) ? at.tools : []).flatMap((x) => (isObj(x) && isObj(x.function) && typeof x.function.name === 'string' ? [x.function.name] : []));
    const narrowed = narrowToAllowed(built.tools, names, at.mode, 'tool_choice.allowed_tools');
    built.tools.splice(0, built.tools.length, ...narrowed.tools);
    toolChoice = narrowed.toolChoice;
  }
  const max = body.max_completion_tokens ?? body.max_tokens;
  const rf = body.response_format;
  const extra: Obj = {};
  for (const k in body) if (!KNOWN.has(k)) extra[k] = body[k];
  const forwardHeaders: Record<string, string> = {};
  const beta = headers['anthropic-beta'];
  if (typeof beta === 'string') forwardHeaders['anthropic-beta'] = beta;
  const effort = body.reasoning_effort;
  const request: Omit<CallRequest, 'system' | 'messages' | 'tools'> = {
    inbound: 'openai-chat',
    model: body.model,
    ...(toolChoice ? { toolChoice } : {}),
    ...(typeof body.parallel_tool_calls === 'boolean' ? { parallelToolCalls: body.parallel_tool_calls } : {}),
    maxOutputTokens: typeof max === 'number' && max > 0 ? max : null,
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === 'number' ? { topP: body.top_p } : {}),
    ...(typeof body.stop === 'string' ? { stop: [body.stop] } : Array.isArray(body.stop) ? { stop: body.stop.filter((s): s is string => typeof s === 'string') } : {}),
    n: typeof body.n === 'number' && body.n > 0 ? body.n : 1,
    ...(typeof body.seed === 'number' ? { seed: body.seed } : {}),
    ...(typeof effort === 'string' ? { reasoning: { effort: effort as NonNullable<CallRequest['reasoning']>['effort'] } } : {}),
    ...(isObj(rf) && (rf.type === 'json_object' || rf.type === 'text') ? { responseFormat: { type: rf.type } } : {}),
    ...(isObj(rf) && rf.type === 'json_schema' && isObj(rf.json_schema)
      ? { responseFormat: { type: 'json_schema' as const, name: String(rf.json_schema.name ?? 'response'), schema: isObj(rf.json_schema.schema) ? rf.json_schema.schema : {}, ...(typeof rf.json_schema.strict === 'boolean' ? { strict: rf.json_schema.strict } : {}) } }
      : {}),
    stream: body.stream === true,
    streamUsage: isObj(body.stream_options) && body.stream_options.include_usage === true,
    ...(typeof body.service_tier === 'string' ? { serviceTier: body.service_tier } : {}),
    extra,
    forwardHeaders,
    raw: body,
  };
  return withLazyConversation(request, body, built);
}

/**
 * The request with `system`, `messages` and `tools` built on first read: the pass-through to an
 * OpenAI-protocol upstream (the common case) sends the client's body and never reads them.
 */
function withLazyConversation(request: Omit<CallRequest, 'system' | 'messages' | 'tools'>, body: ChatRequest, prebuilt: Pick<CallRequest, 'system' | 'messages' | 'tools'> | null): CallRequest {
  let built = prebuilt;
  const get = () => (built ??= conversation(body));
  const lazy = <K extends 'system' | 'messages' | 'tools'>(k: K): PropertyDescriptor => ({
    enumerable: true,
    configurable: true,
    get: () => get()[k],
    set(v: CallRequest[K]) {
      Object.defineProperty(request, k, { value: v, writable: true, enumerable: true, configurable: true });
    },
  });
  return Object.defineProperties(request, { system: lazy('system'), messages: lazy('messages'), tools: lazy('tools') }) as CallRequest;
}
