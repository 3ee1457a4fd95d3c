/**
 * The neutral call → an Anthropic Messages body (for clients that do not speak Anthropic: OpenAI
 * Responses, and any front end without a pass-through). Thinking goes back only when Anthropic signed
 * it; `cache_control` marks are kept where the client put them.
 */
import type { CacheControl, CallMessage, CallRequest, ContentPart, ImagePart, TextPart } from '../../pipeline/call-model.ts';
import { badRequest } from '../../errors.ts';
import type { CallContext, UpstreamRequest } from '../types.ts';
import { anthropicBase, anthropicHeaders, uncappedMaxTokens } from './request.ts';

type Obj = Record<string, unknown>;

const cc = (c: CacheControl | undefined): Obj => (c ? { cache_control: { ...c } } : {});
const toolId = (id: string): string => id.replace(/[^a-zA-Z0-9_-]/g, '_');

function imageBlock(p: ImagePart): Obj {
  const source = p.source.kind === 'base64' ? { type: 'base64', media_type: p.source.mediaType, data: p.source.data } : dataOrUrl(p.source.url);
  return { type: 'image', source, ...cc(p.cacheControl) };
}

function dataOrUrl(url: string): Obj {
  const m = /^data:([^;,]*);base64,(.*)$/s.exec(url);
  return m ? { type: 'base64', media_type: m[1] || 'image/png', data: m[2] } : { type: 'url', url };
}

/** Chat Completions sends PDFs as `file` parts with inline `file_data`; Anthropic calls them documents. */
function openAIFile(raw: Obj): Obj {
  const file = raw.type === 'file' && raw.file !== null && typeof raw.file === 'object' ? (raw.file as Obj) : null;
  if (!file || typeof file.file_data !== 'string') {
    throw badRequest(`Content part type \`${String(raw.type)}\` is not supported by Anthropic models (files only as inline \`file_data\`).`, 'unsupported_content');
  }
  const m = /^data:([^;,]*);base64,(.*)$/s.exec(file.file_data);
  const block: Obj = { type: 'document', source: { type: 'base64', media_type: m?.[1] || 'application/pdf', data: m ? m[2] : file.file_data } };
  if (typeof file.filename === 'string' && file.filename !== '') block.title = file.filename;
  return block;
}

function textBlock(p: TextPart): Obj | null {
  // Anthropic rejects empty text blocks.
  return p.text === '' ? null : { type: 'text', text: p.text, ...cc(p.cacheControl) };
}

function block(p: ContentPart): Obj | null {
  switch (p.type) {
    case 'text':
      return textBlock(p);
    case 'image':
      return imageBlock(p);
    case 'document':
      if (p.protocol === 'anthropic-messages') return p.raw;
      return openAIFile(p.raw);
    case 'tool-call': {
      let input: unknown = {};
      if (p.kind === 'custom') input = { content: p.arguments };
      else {
        try {
          input = p.arguments.trim() === '' ? {} : JSON.parse(p.arguments);
        } catch {
          input = {};
        }
      }
      return { type: 'tool_use', id: toolId(p.id), name: p.name, input };
    }
    case 'tool-result': {
      const content = typeof p.content === 'string' ? p.content : p.content.flatMap((x) => (x.type === 'text' ? (textBlock(x) ?? []) : imageBlock(x)));
      return { type: 'tool_result', tool_use_id: toolId(p.callId), content, ...(p.isError ? { is_error: true } : {}), ...cc(p.cacheControl) };
    }
    case 'reasoning':
      // Only Anthropic's own signed (or redacted) thinking may go back; anything else would be rejected as forged.
      if (p.opaque?.origin !== 'anthropic') return null;
      return p.redacted ? { type: 'redacted_thinking', data: p.opaque.value } : { type: 'thinking', thinking: p.text, signature: p.opaque.value };
  }
}

function turns(messages: CallMessage[]): Obj[] {
  const out: Array<{ role: 'user' | 'assistant'; content: Obj[] }> = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    // A mid-conversation instruction travels as user text, marked as the system's.
    const parts = m.role === 'system' ? m.content.flatMap((p) => (p.type === 'text' ? [{ ...p, text: `<system>${p.text}</system>` }] : [])) : m.content;
    const blocks = parts.map(block).filter((b): b is Obj => b !== null);
    if (blocks.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  // A user turn's tool results come before anything else in it.
  for (const t of out) if (t.role === 'user') t.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  return out;
}

/**
 * Whether the conversation continues a tool call whose assistant turn lacks its signed thinking block. With
 * thinking on, Anthropic refuses such a turn (400: "a final assistant message must start with a thinking
 * block"), and a chat client has nowhere to keep the signature: chat's `reasoning_content` is text only. Such
 * a turn goes without thinking rather than fail every second step of an agent loop.
 */
function unsignedToolTurn(messages: Obj[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== 'assistant') continue;
    const blocks = messages[i].content as Obj[];
    return blocks.some((b) => b.type === 'tool_use') && blocks[0]?.type !== 'thinking' && blocks[0]?.type !== 'redacted_thinking';
  }
  return false;
}

export function anthropicBodyFromCall(req: CallRequest, model: string, stream: boolean): Obj {
  if (req.n > 1) throw badRequest('Anthropic models return one choice per request; `n` must be 1.', 'unsupported_parameter', 'n');
  const body: Obj = { model, max_tokens: req.maxOutputTokens ?? uncappedMaxTokens(model), messages: turns(req.messages) };
  const system = req.system.map(textBlock).filter((b): b is Obj => b !== null);
  if (req.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, req.temperature));
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined) body.top_k = req.topK;
  const stop = (req.stop ?? []).filter((s) => s.trim() !== '');
  if (stop.length > 0) body.stop_sequences = stop;
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      input_schema: t.kind === 'custom' ? { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] } : { ...(t.parameters ?? { properties: {} }), type: 'object' },
      ...cc(t.cacheControl),
    }));
    const c = req.toolChoice;
    let choice: Obj | undefined = c ? (c.type === 'required' ? { type: 'any' } : c.type === 'tool' ? { type: 'tool', name: c.name } : { type: c.type }) : undefined;
    if (req.parallelToolCalls === false && choice?.type !== 'none') choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
    if (choice) body.tool_choice = choice;
  }
  const r = req.reasoning;
  if (r && (r.budgetTokens || r.enabled || (r.effort && r.effort !== 'none' && r.effort !== 'minimal'))) {
    const budgets: Record<string, number> = { low: 2048, medium: 8192, high: 16384, xhigh: 32000 };
    const budget = Math.max(1024, r.budgetTokens ?? budgets[r.effort ?? 'medium'] ?? 8192);
    // The budget must stay below max_tokens.
    if ((body.max_tokens as number) > budget && !unsignedToolTurn(body.messages as Obj[])) body.thinking = { type: 'enabled', budget_tokens: budget };
  }
  if (req.cacheControl) body.cache_control = { ...req.cacheControl };
  if (req.responseFormat && req.responseFormat.type !== 'text') {
    const f = req.responseFormat;
    const instruction =
      f.type === 'json_schema'
        ? `Respond with a single valid JSON value only, conforming to this JSON Schema named "${f.name}":\n${JSON.stringify(f.schema)}`
        : 'Respond with a single valid JSON object only: no prose, no Markdown code fences.';
    system.push({ type: 'text', text: instruction });
  }
  // Blocks only when one carries a cache mark; otherwise the one string every Claude model takes.
  if (system.length > 0) body.system = system.some((b) => b.cache_control) ? system : system.map((b) => b.text as string).join('\n\n');
  if (stream) body.stream = true;
  return body;
}

export function anthropicCallRequest(req: CallRequest, ctx: CallContext): UpstreamRequest {
  return {
    method: 'POST',
    url: `${anthropicBase(ctx.provider.baseUrl)}/v1/messages`,
    // A client's `anthropic-beta` (prompt caching, long context) reaches Anthropic as sent.
    headers: { ...anthropicHeaders(ctx.apiKey, true), ...(req.forwardHeaders['anthropic-beta'] ? { 'anthropic-beta': req.forwardHeaders['anthropic-beta'] } : {}) },
    body: JSON.stringify(anthropicBodyFromCall(req, ctx.model, ctx.stream)),
  };
}
