/**
 * Glue until the neutral call runner serves every upstream: a neutral `CallRequest` as an OpenAI chat
 * body (D.6), which every provider adapter already translates, and the adapters' OpenAI chat chunks and
 * completions back as neutral events (D.7). Custom tools (Codex's `apply_patch`) travel as function tools
 * taking one string, `content`, and are unwrapped on the way back.
 */
import type { CallEvent, CallMessage, CallRequest, CallResult, ContentPart, FinishReason, ToolCallPart } from '../../pipeline/call-model.ts';

type Obj = Record<string, unknown>;

const CUSTOM_PARAMETERS = { type: 'object', properties: { content: { type: 'string', description: 'The raw input of this tool.' } }, required: ['content'] };

export function toChatBody(req: CallRequest): Obj & { model: string; messages: unknown[] } {
  const messages: Obj[] = [];
  const system = req.system.map((p) => p.text).join('\n\n');
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const m of req.messages) messages.push(...chatMessages(m));
  const body: Obj & { model: string; messages: unknown[] } = { model: req.model, messages };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function:
        t.kind === 'function'
          ? { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: 'object', properties: {} }, ...(t.strict !== undefined ? { strict: t.strict } : {}) }
          : { name: t.name, description: customDescription(t.description, t.format), parameters: CUSTOM_PARAMETERS },
    }));
  }
  const choice = req.toolChoice;
  if (choice) body.tool_choice = choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
  if (req.parallelToolCalls !== undefined && req.tools.length > 0) body.parallel_tool_calls = req.parallelToolCalls;
  if (req.maxOutputTokens !== null) body.max_completion_tokens = req.maxOutputTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  const effort = req.reasoning?.effort;
  if (effort && effort !== 'none') body.reasoning_effort = effort === 'xhigh' ? 'high' : effort;
  const f = req.responseFormat;
  if (f?.type === 'json_schema') body.response_format = { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, ...(f.strict !== undefined ? { strict: f.strict } : {}) } };
  else if (f?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (req.stream) body.stream = true;
  return body;
}

function customDescription(description: string | undefined, format: Record<string, unknown> | undefined): string {
  const parts = [description ?? 'A tool taking free-form text.'];
  const definition = format?.definition;
  if (typeof definition === 'string') parts.push(`Its input (the "content" argument, raw text) must follow this ${String(format?.syntax ?? '')} grammar:\n${definition}`);
  return parts.join('\n\n');
}

function chatMessages(m: CallMessage): Obj[] {
  if (m.role === 'assistant') {
    const text = m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    const calls = m.content.filter((p): p is ToolCallPart => p.type === 'tool-call');
    const msg: Obj = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
    if (calls.length > 0) {
      msg.tool_calls = calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.kind === 'custom' ? JSON.stringify({ content: c.arguments }) : c.arguments || '{}' },
      }));
    }
    return [msg];
  }
  const out: Obj[] = [];
  const rest: Obj[] = [];
  for (const p of m.content) {
    if (p.type === 'tool-result') {
      const text = typeof p.content === 'string' ? p.content : p.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
      out.push({ role: 'tool', tool_call_id: p.callId, content: p.isError ? `Error: ${text}` : text });
    } else if (p.type === 'text') {
      rest.push({ type: 'text', text: p.text });
    } else if (p.type === 'image') {
      const url = p.source.kind === 'url' ? p.source.url : `data:${p.source.mediaType};base64,${p.source.data}`;
      rest.push({ type: 'image_url', image_url: { url, ...(p.detail ? { detail: p.detail } : {}) } });
    }
  }
  if (rest.length > 0) {
    out.push({ role: 'user', content: rest.every((p) => p.type === 'text') ? rest.map((p) => p.text).join('\n') : rest });
  }
  return out;
}

export function finishFrom(raw: string | null): FinishReason {
  switch (raw) {
    case 'stop':
      return { unified: 'stop', raw };
    case 'length':
      return { unified: 'length', raw };
    case 'tool_calls':
    case 'function_call':
      return { unified: 'tool-calls', raw };
    case 'content_filter':
      return { unified: 'content-filter', raw };
    default:
      return { unified: raw === null ? 'stop' : 'other', raw };
  }
}

/** The `content` of a custom tool's wrapped arguments (the raw JSON text when the model did not wrap it). */
export function unwrapCustom(args: string): string {
  try {
    const j = JSON.parse(args) as { content?: unknown; input?: unknown };
    if (typeof j.content === 'string') return j.content;
    if (typeof j.input === 'string') return j.input;
  } catch {
    /* not JSON: the model wrote the raw input */
  }
  return args;
}

interface ToolState {
  id: string;
  name: string;
  custom: boolean;
  args: string;
}

/**
 * OpenAI chat chunks → neutral events. The first tool call streams live; further ones (which chat may
 * interleave) are held and emitted whole after it, since Responses items never interleave. Custom tool
 * input is unwrapped once complete.
 */
export class ChatChunkDecoder {
  private readonly custom: Set<string>;
  private block: 'text' | 'reasoning' | null = null;
  private liveIndex: number | null = null;
  private readonly tools = new Map<number, ToolState>();
  private finish: FinishReason | null = null;
  private started = false;

  constructor(req: CallRequest) {
    this.custom = new Set(req.tools.filter((t) => t.kind === 'custom').map((t) => t.name));
  }

  chunk(json: string): CallEvent[] {
    const c = JSON.parse(json) as { id?: unknown; model?: unknown; choices?: Array<{ delta?: Obj; finish_reason?: unknown }> };
    const out: CallEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: String(c.id ?? ''), model: String(c.model ?? '') });
    }
    const choice = c.choices?.[0];
    const delta = choice?.delta ?? {};
    const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (reasoning !== '') {
      if (this.block !== 'reasoning') this.endBlock(out, 'reasoning');
      out.push({ type: 'reasoning-delta', choice: 0, text: reasoning });
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.block !== 'text') this.endBlock(out, 'text');
      out.push({ type: 'text-delta', choice: 0, text: delta.content });
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const t of delta.tool_calls as Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>) this.toolDelta(t, out);
    }
    if (typeof choice?.finish_reason === 'string') this.finish = finishFrom(choice.finish_reason);
    return out;
  }

  private toolDelta(t: { index?: number; id?: string; function?: { name?: string; arguments?: string } }, out: CallEvent[]): void {
    const index = t.index ?? 0;
    let s = this.tools.get(index);
    if (!s) {
      const name = t.function?.name ?? '';
      s = { id: t.id ?? `call_${index}`, name, custom: this.custom.has(name), args: '' };
      this.tools.set(index, s);
      if (this.liveIndex === null) {
        this.endBlock(out, null);
        this.liveIndex = index;
        out.push({ type: 'tool-call-start', choice: 0, index, id: s.id, name: s.name, kind: s.custom ? 'custom' : 'function' });
      }
    }
    const fragment = t.function?.arguments ?? '';
    if (fragment === '') return;
    s.args += fragment;
    if (index === this.liveIndex && !s.custom) out.push({ type: 'tool-call-delta', choice: 0, index, argumentsDelta: fragment });
  }

  private endBlock(out: CallEvent[], next: 'text' | 'reasoning' | null): void {
    if (this.block !== null) out.push({ type: 'block-end', choice: 0 });
    this.block = next;
  }

  /** The stream ended: the held tool calls, the finish. */
  end(): CallEvent[] {
    const out: CallEvent[] = [];
    if (this.block !== null) out.push({ type: 'block-end', choice: 0 });
    this.block = null;
    for (const [index, s] of this.tools) {
      if (index !== this.liveIndex) out.push({ type: 'tool-call-start', choice: 0, index, id: s.id, name: s.name, kind: s.custom ? 'custom' : 'function' });
      if (s.custom) out.push({ type: 'tool-call-delta', choice: 0, index, argumentsDelta: unwrapCustom(s.args) });
      else if (index !== this.liveIndex && s.args !== '') out.push({ type: 'tool-call-delta', choice: 0, index, argumentsDelta: s.args });
      out.push({ type: 'block-end', choice: 0 });
    }
    this.tools.clear();
    out.push({ type: 'finish', choice: 0, reason: this.finish ?? { unified: 'stop', raw: null } });
    return out;
  }
}

/** A non-stream chat completion → the neutral result. */
export function chatCompletionToResult(body: Obj, req: CallRequest): CallResult {
  const custom = new Set(req.tools.filter((t) => t.kind === 'custom').map((t) => t.name));
  const choices = Array.isArray(body.choices) ? (body.choices as Array<{ message?: Obj; finish_reason?: unknown }>) : [];
  return {
    id: String(body.id ?? ''),
    model: String(body.model ?? ''),
    created: typeof body.created === 'number' ? body.created : Math.floor(Date.now() / 1000),
    usage: null,
    choices: choices.map((c) => {
      const m = c.message ?? {};
      const content: ContentPart[] = [];
      const reasoning = typeof m.reasoning_content === 'string' ? m.reasoning_content : typeof m.reasoning === 'string' ? m.reasoning : '';
      if (reasoning !== '') content.push({ type: 'reasoning', text: reasoning });
      if (typeof m.content === 'string' && m.content !== '') content.push({ type: 'text', text: m.content });
      for (const t of (Array.isArray(m.tool_calls) ? m.tool_calls : []) as Array<{ id?: string; function?: { name?: string; arguments?: string } }>) {
        const name = t.function?.name ?? '';
        const isCustom = custom.has(name);
        const args = t.function?.arguments ?? '';
        content.push({ type: 'tool-call', id: t.id ?? '', name, arguments: isCustom ? unwrapCustom(args) : args, kind: isCustom ? 'custom' : 'function' });
      }
      return { content, finish: finishFrom(typeof c.finish_reason === 'string' ? c.finish_reason : null) };
    }),
  };
}
