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
  const extra: Obj = {};
  for (const k in body) if (!KNOWN.has(k)) extra[k] = body[k];
  const forwardHeaders: Record<string, string> = {};
  const beta = headers['anthropic-beta'];
  if (typeof beta === 'string') forwardHeaders['anthropic-beta'] = beta;
  return new ChatCallRequest(body, toolChoice, extra, forwardHeaders, built);
}

type Conversation = Pick<CallRequest, 'system' | 'messages' | 'tools'>;

/**
 * A chat body as the call model, its conversation (`system`, `messages`, `tools`) built on first read: the
 * pass-through to an OpenAI-protocol upstream (the common case) sends the client's body and never reads it.
 * A class with the same fields in the same order every time, so reading them stays fast; the lazy three
 * are accessors on the prototype (no per-call closures or property descriptors).
 */
class ChatCallRequest implements CallRequest {
  readonly inbound = 'openai-chat' as const;
  model: string;
  toolChoice: CallRequest['toolChoice'];
  parallelToolCalls: boolean | undefined;
  maxOutputTokens: number | null;
  temperature: number | undefined;
  topP: number | undefined;
  stop: string[] | undefined;
  n: number;
  seed: number | undefined;
  reasoning: CallRequest['reasoning'];
  responseFormat: CallRequest['responseFormat'];
  stream: boolean;
  streamUsage: boolean;
  serviceTier: string | undefined;
  extra: Obj;
  forwardHeaders: Record<string, string>;
  raw: ChatRequest;
  #conversation: Conversation | null;

  constructor(body: ChatRequest, toolChoice: CallRequest['toolChoice'], extra: Obj, forwardHeaders: Record<string, string>, built: Conversation | null) {
    const max = body.max_completion_tokens ?? body.max_tokens;
    const rf = body.response_format;
    const effort = body.reasoning_effort;
    this.model = body.model;
    this.toolChoice = toolChoice;
    this.parallelToolCalls = typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : undefined;
    this.maxOutputTokens = typeof max === 'number' && max > 0 ? max : null;
    this.temperature = typeof body.temperature === 'number' ? body.temperature : undefined;
    this.topP = typeof body.top_p === 'number' ? body.top_p : undefined;
    this.stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((s): s is string => typeof s === 'string') : undefined;
    this.n = typeof body.n === 'number' && body.n > 0 ? body.n : 1;
    this.seed = typeof body.seed === 'number' ? body.seed : undefined;
    this.reasoning = typeof effort === 'string' ? { effort: effort as NonNullable<CallRequest['reasoning']>['effort'] } : undefined;
    this.responseFormat =
      isObj(rf) && (rf.type === 'json_object' || rf.type === 'text')
        ? { type: rf.type }
        : isObj(rf) && rf.type === 'json_schema' && isObj(rf.json_schema)
          ? { type: 'json_schema', name: String(rf.json_schema.name ?? 'response'), schema: isObj(rf.json_schema.schema) ? rf.json_schema.schema : {}, ...(typeof rf.json_schema.strict === 'boolean' ? { strict: rf.json_schema.strict } : {}) }
          : undefined;
    this.stream = body.stream === true;
    this.streamUsage = isObj(body.stream_options) && body.stream_options.include_usage === true;
    this.serviceTier = typeof body.service_tier === 'string' ? body.service_tier : undefined;
    this.extra = extra;
    this.forwardHeaders = forwardHeaders;
    this.raw = body;
    this.#conversation = built;
  }

  #built(): Conversation {
    return (this.#conversation ??= conversation(this.raw));
  }

  get system(): TextPart[] {
    return this.#built().system;
  }

  set system(v: TextPart[]) {
    this.#built().system = v;
  }

  get messages(): CallMessage[] {
    return this.#built().messages;
  }

  set messages(v: CallMessage[]) {
    this.#built().messages = v;
  }

  get tools(): ToolDefinition[] {
    return this.#built().tools;
  }

  set tools(v: ToolDefinition[]) {
    this.#built().tools = v;
  }
}
