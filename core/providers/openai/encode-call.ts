/**
 * The neutral call → an OpenAI chat completions body (OpenAI, OpenAI-compatible presets, Azure, demo;
 * Gemini reuses it before its own translation). Only what chat understands is sent: Anthropic-only
 * fields (cache_control, context_management, beta fields) and foreign reasoning signatures stay behind.
 */
import { knownOutputLimit } from '../../pricing/output-limits.ts';
import type { CallMessage, CallRequest, ContentPart, ImagePart, TextPart, ToolCallPart, ToolResultPart } from '../../pipeline/call-model.ts';
import type { CallContext } from '../types.ts';
import { shortToolName } from '../tool-names.ts';
import { rejectsStreamOptions } from './request.ts';

type Obj = Record<string, unknown>;

const imageUrl = (p: ImagePart): string => (p.source.kind === 'url' ? p.source.url : `data:${p.source.mediaType};base64,${p.source.data}`);

function userParts(parts: Array<TextPart | ImagePart | ContentPart>): string | Obj[] {
  const out: Obj[] = [];
  for (const p of parts) {
    if (p.type === 'text') out.push({ type: 'text', text: p.text });
    else if (p.type === 'image') out.push({ type: 'image_url', image_url: { url: imageUrl(p), ...(p.detail ? { detail: p.detail } : {}) } });
    else if (p.type === 'document' && p.protocol === 'openai-chat') out.push(p.raw);
  }
  if (out.length > 0 && out.every((p) => p.type === 'text')) return out.map((p) => p.text as string).join('\n');
  return out;
}

function toolResultText(r: ToolResultPart): string {
  const text = typeof r.content === 'string' ? r.content : r.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  // Chat has no error flag on a tool message: say it in the text.
  return r.isError ? `Error: ${text}` : text;
}

function messagesFor(req: CallRequest, ctx: CallContext, systemPerPart: boolean): Obj[] {
  const out: Obj[] = [];
  if (systemPerPart) for (const p of req.system) out.push({ role: 'system', content: p.text });
  else {
    const system = req.system.map((p) => p.text).join('\n');
    if (system !== '') out.push({ role: 'system', content: system });
  }
  for (const m of req.messages) out.push(...messageFor(m, ctx));
  return out;
}

/**
 * Reasoning that came from a chat upstream (the gateway marked it, see GATEWAY_SIGNATURE) goes back as
 * `reasoning_content`: DeepSeek-style servers require it on the turns that made tool calls. OpenAI's own
 * API and Azure take no such field.
 */
function reasoningBack(m: CallMessage, ctx: CallContext): string | null {
  if (ctx.provider.type === 'openai' || ctx.provider.type === 'azure') return null;
  const texts = m.content.flatMap((p) => (p.type === 'reasoning' && p.opaque?.origin === 'gateway' ? [p.text] : []));
  return texts.length > 0 ? texts.join('') : null;
}

/**
 * Gemini (natively, or through Google's OpenAI compatibility) needs its thought signature back on the
 * tool calls it made; it rides where Google's compatibility layer puts it. No other upstream sees it.
 */
function readsThoughtSignatures(ctx: CallContext): boolean {
  return ctx.provider.type === 'gemini' || ctx.provider.baseUrl.includes('generativelanguage.googleapis.com');
}

function messageFor(m: CallMessage, ctx: CallContext): Obj[] {
  if (m.role === 'system') {
    const text = m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
    return text === '' ? [] : [{ role: 'system', content: text }];
  }
  if (m.role === 'assistant') {
    const text = m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    const calls = m.content.filter((p): p is ToolCallPart => p.type === 'tool-call');
    const msg: Obj = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
    const reasoning = reasoningBack(m, ctx);
    if (reasoning !== null) msg.reasoning_content = reasoning;
    if (calls.length > 0) {
      const signatures = readsThoughtSignatures(ctx);
      msg.tool_calls = calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: shortToolName(c.name), arguments: c.kind === 'custom' ? JSON.stringify({ content: c.arguments }) : c.arguments || '{}' },
        ...(signatures && c.opaque?.origin === 'gemini' ? { extra_content: { google: { thought_signature: c.opaque.value } } } : {}),
      }));
    }
    return [msg];
  }
  // Tool results go first, each as a `tool` message, then whatever else the turn says.
  const out: Obj[] = [];
  for (const p of m.content) if (p.type === 'tool-result') out.push({ role: 'tool', tool_call_id: p.callId, content: toolResultText(p) });
  const rest = m.content.filter((p) => p.type !== 'tool-result' && p.type !== 'reasoning' && p.type !== 'tool-call');
  if (rest.length > 0) {
    const content = userParts(rest);
    if (!(Array.isArray(content) && content.length === 0)) out.push({ role: 'user', content, ...(m.name ? { name: m.name } : {}) });
  }
  // Images inside tool results have no place in a tool message: they follow as a user message.
  for (const p of m.content) {
    if (p.type === 'tool-result' && typeof p.content !== 'string') {
      const images = p.content.filter((x): x is ImagePart => x.type === 'image');
      if (images.length > 0) out.push({ role: 'user', content: userParts(images) });
    }
  }
  return out;
}

const EFFORT_BY_BUDGET: Array<[number, string]> = [
  [2048, 'low'],
  [16384, 'medium'],
];

function effortFor(req: CallRequest): string | null {
  const r = req.reasoning;
  if (!r) return null;
  if (r.effort) return r.effort === 'xhigh' ? 'high' : r.effort;
  if (typeof r.budgetTokens === 'number') {
    for (const [max, effort] of EFFORT_BY_BUDGET) if (r.budgetTokens <= max) return effort;
    return 'high';
  }
  return r.enabled ? 'medium' : null;
}

/**
 * Whether an OpenAI model takes `reasoning_effort`: not the gpt-4 and gpt-3.5 families nor gpt-5's chat variants,
 * which answer 400. Any other id (the o-series, gpt-5, a deployment name on Azure) is sent it.
 */
function reasons(model: string): boolean {
  return !/^(gpt-4|gpt-3\.5|chatgpt-4o)|^gpt-5[.\d]*-chat/.test(model.toLowerCase().slice(model.lastIndexOf('/') + 1));
}

/** `systemPerPart`: one system message per instruction (Gemini's translation keeps them as separate parts). */
export function openAIChatBodyFromCall(req: CallRequest, ctx: CallContext, systemPerPart = false): Obj {
  const body: Obj = { model: ctx.model, messages: messagesFor(req, ctx, systemPerPart) };
  const official = ctx.provider.type === 'openai' || ctx.provider.type === 'azure';
  // A cap asked in another protocol's terms (Claude Code's 32,000) is "up to that much": no more than the model
  // writes, which OpenAI enforces with a 400 (gpt-4o's limit is 16,384).
  if (req.maxOutputTokens !== null) body[official ? 'max_completion_tokens' : 'max_tokens'] = Math.min(req.maxOutputTokens, knownOutputLimit(ctx.model) ?? Number.POSITIVE_INFINITY);
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop && req.stop.length > 0) body.stop = req.stop;
  if (req.n > 1) body.n = req.n;
  if (req.seed !== undefined) body.seed = req.seed;
  const tools = req.tools.filter((t) => t.kind === 'function' || t.kind === 'custom');
  if (tools.length > 0) {
    body.tools = tools.map((t) => ({
      type: 'function',
      function: {
        name: shortToolName(t.name),
        ...(t.description ? { description: t.description } : {}),
        // A custom (free-text) tool becomes a function with one string parameter.
        parameters: t.kind === 'custom' ? { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] } : (t.parameters ?? { type: 'object', properties: {} }),
        ...(t.strict !== undefined ? { strict: t.strict } : {}),
      },
    }));
    const choice = req.toolChoice;
    if (choice) body.tool_choice = choice.type === 'tool' ? { type: 'function', function: { name: shortToolName(choice.name) } } : choice.type;
    if (req.parallelToolCalls === false) body.parallel_tool_calls = false;
  }
  if (req.responseFormat && req.responseFormat.type !== 'text') {
    const f = req.responseFormat;
    body.response_format = f.type === 'json_schema' ? { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, ...(f.strict !== undefined ? { strict: f.strict } : {}) } } : { type: 'json_object' };
  }
  const effort = effortFor(req);
  // Only OpenAI's reasoning models take it; the others answer 400, and Claude Code asks for effort on every call.
  if (effort !== null && effort !== 'none' && official && reasons(ctx.model)) body.reasoning_effort = effort;
  if (ctx.stream) {
    body.stream = true;
    if (!rejectsStreamOptions(ctx)) body.stream_options = { include_usage: true };
  }
  return body;
}
