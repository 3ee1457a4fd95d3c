import { badRequest } from '../../errors.ts';
import { knownOutputLimit } from '../../pricing/output-limits.ts';
import type { CallContext, ChatRequest, UpstreamRequest } from '../types.ts';
import {
  ANTHROPIC_VERSION,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicRequest,
  type AnthropicRequestBlock,
  type AnthropicTextBlock,
  type AnthropicTool,
  type AnthropicToolChoice,
  type AnthropicToolResultBlock,
} from './wire.ts';

/** Anthropic requires `max_tokens`; every Claude model can produce at least this many. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * `max_tokens` for a call that named no cap: the model's own output limit, as OpenAI's and Responses' "no cap"
 * means (and as admission reserves). 4,096 cut Codex's long patches short. A model not in the table gets
 * `DEFAULT_MAX_TOKENS`, which every Claude model takes.
 */
export const uncappedMaxTokens = (model: string): number => knownOutputLimit(model) ?? DEFAULT_MAX_TOKENS;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Users paste either SDK's base URL; both `https://api.anthropic.com` and `.../v1` must work. */
export function anthropicBase(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export function anthropicHeaders(apiKey: string | null, withBody: boolean): Record<string, string> {
  const h: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  if (apiKey !== null) h['x-api-key'] = apiKey;
  if (withBody) h['content-type'] = 'application/json';
  return h;
}

// ---- content parts ----

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const m = DATA_URL.exec(url);
  if (!m || !/;base64$/i.test(m[2])) return null;
  return { mediaType: m[1].toLowerCase(), base64: m[3] };
}

function imageBlock(part: Obj, param: string): AnthropicImageBlock {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : isObj(image) && typeof image.url === 'string' ? image.url : '';
  if (url.startsWith('data:')) {
    const d = parseDataUrl(url);
    if (!d) throw badRequest('Image data URLs must be base64-encoded for Anthropic models.', 'invalid_image_url', param);
    return { type: 'image', source: { type: 'base64', media_type: d.mediaType || 'image/png', data: d.base64 } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw badRequest('image_url.url must be an http(s) URL or a base64 data URL.', 'invalid_image_url', param);
}

/** Chat Completions only accepts PDFs as `file` parts; Anthropic calls them documents. */
function documentBlock(part: Obj, param: string): AnthropicDocumentBlock {
  const file = isObj(part.file) ? part.file : {};
  if (typeof file.file_data !== 'string') {
    throw badRequest('Anthropic models accept files only as inline `file_data`, not `file_id`.', 'unsupported_content', param);
  }
  const d = parseDataUrl(file.file_data);
  const block: AnthropicDocumentBlock = {
    type: 'document',
    source: { type: 'base64', media_type: d?.mediaType || 'application/pdf', data: d ? d.base64 : file.file_data },
  };
  if (typeof file.filename === 'string' && file.filename !== '') block.title = file.filename;
  return block;
}

type PartBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock;

/** Anthropic rejects empty text blocks, so they are dropped rather than forwarded. */
function contentBlocks(content: unknown, param: string, allow: { media: boolean }): PartBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw badRequest(`${param} must be a string or an array of content parts.`, 'invalid_type', param);
  const out: PartBlock[] = [];
  content.forEach((part, j) => {
    const p = `${param}[${j}]`;
    if (!isObj(part)) throw badRequest(`${p} must be an object.`, 'invalid_type', p);
    // Prompt caching: `cache_control` on an OpenAI-format part is Anthropic's own mark, kept as the client set it.
    const cc = isObj(part.cache_control) ? { cache_control: part.cache_control } : {};
    if (part.type === 'text' || part.type === 'refusal') {
      const text = part.type === 'text' ? part.text : part.refusal;
      if (typeof text === 'string' && text !== '') out.push({ type: 'text', text, ...cc });
    } else if (part.type === 'image_url' && allow.media) {
      out.push({ ...imageBlock(part, p), ...cc });
    } else if (part.type === 'file' && allow.media) {
      out.push({ ...documentBlock(part, p), ...cc });
    } else {
      throw badRequest(`Content part type \`${String(part.type)}\` is not supported here by Anthropic models.`, 'unsupported_content', p);
    }
  });
  return out;
}

function textBlocks(content: unknown, param: string): AnthropicTextBlock[] {
  return contentBlocks(content, param, { media: false }).filter((b): b is AnthropicTextBlock => b.type === 'text');
}

// ---- messages ----

/** Anthropic ids must match `[a-zA-Z0-9_-]+`; ids minted by other providers may not. */
const toolId = (id: string): string => id.replace(/[^a-zA-Z0-9_-]/g, '_');

function parseArguments(args: unknown): Record<string, unknown> {
  if (isObj(args)) return args;
  if (typeof args !== 'string') return {};
  try {
    const v: unknown = JSON.parse(args);
    return isObj(v) ? v : {};
  } catch {
    // Models do emit truncated JSON; a replayed history must not fail because of it.
    return {};
  }
}

function assistantBlocks(m: Obj, param: string): AnthropicRequestBlock[] {
  const blocks: AnthropicRequestBlock[] = contentBlocks(m.content, `${param}.content`, { media: false });
  if (Array.isArray(m.tool_calls)) {
    m.tool_calls.forEach((call, j) => {
      const p = `${param}.tool_calls[${j}]`;
      if (!isObj(call) || !isObj(call.function) || typeof call.function.name !== 'string') {
        throw badRequest(`${p} must have function.name.`, 'invalid_type', p);
      }
      blocks.push({
        type: 'tool_use',
        id: toolId(typeof call.id === 'string' && call.id !== '' ? call.id : `call_${j}`),
        name: call.function.name,
        input: parseArguments(call.function.arguments),
      });
    });
  }
  return blocks;
}

function toolResultBlock(m: Obj, param: string): AnthropicToolResultBlock {
  if (typeof m.tool_call_id !== 'string' || m.tool_call_id === '') {
    throw badRequest(`${param}.tool_call_id is required for tool messages.`, 'missing_parameter', `${param}.tool_call_id`);
  }
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: toolId(m.tool_call_id) };
  if (typeof m.content === 'string') {
    if (m.content !== '') block.content = m.content;
  } else {
    const parts = contentBlocks(m.content, `${param}.content`, { media: true });
    if (parts.length > 0) block.content = parts;
  }
  return block;
}

/** The API wants a user turn's tool results before anything else in it. */
function toolResultsFirst(blocks: AnthropicRequestBlock[]): AnthropicRequestBlock[] {
  const results = blocks.filter((b) => b.type === 'tool_result');
  return results.length === 0 ? blocks : [...results, ...blocks.filter((b) => b.type !== 'tool_result')];
}

export function mapMessages(messages: unknown[]): { system: AnthropicTextBlock[]; messages: AnthropicMessage[] } {
  const system: AnthropicTextBlock[] = [];
  const turns: AnthropicMessage[] = [];
  // Roles must alternate, so a turn of the same role as the last one is folded into it.
  const push = (role: 'user' | 'assistant', blocks: AnthropicRequestBlock[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  messages.forEach((m, i) => {
    const param = `messages[${i}]`;
    if (!isObj(m)) throw badRequest(`${param} must be an object.`, 'invalid_type', param);
    switch (m.role) {
      case 'system':
      case 'developer': {
        system.push(...textBlocks(m.content, `${param}.content`));
        return;
      }
      case 'user':
        return push('user', contentBlocks(m.content, `${param}.content`, { media: true }));
      case 'assistant':
        return push('assistant', assistantBlocks(m, param));
      case 'tool':
        return push('user', [toolResultBlock(m, param)]);
      default:
        throw badRequest(`${param}.role \`${String(m.role)}\` is not supported for Anthropic models.`, 'invalid_value', `${param}.role`);
    }
  });
  for (const t of turns) if (t.role === 'user') t.content = toolResultsFirst(t.content);
  return { system, messages: turns };
}

// ---- parameters ----

function mapTools(tools: unknown): AnthropicTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((t, i) => {
    const p = `tools[${i}]`;
    if (!isObj(t) || t.type !== 'function' || !isObj(t.function) || typeof t.function.name !== 'string') {
      throw badRequest(`${p}: only function tools are supported for Anthropic models.`, 'unsupported_tool', p);
    }
    const { name, description, parameters } = t.function;
    const tool: AnthropicTool = {
      name,
      // Anthropic requires an object schema, even for tools without parameters or with `type` left out.
      input_schema: isObj(parameters) ? { ...parameters, type: 'object' } : { type: 'object', properties: {} },
    };
    if (typeof description === 'string' && description !== '') tool.description = description;
    return tool;
  });
}

function mapToolChoice(choice: unknown, parallel: unknown): AnthropicToolChoice | undefined {
  let mapped: AnthropicToolChoice | undefined;
  if (choice === 'none') mapped = { type: 'none' };
  else if (choice === 'auto') mapped = { type: 'auto' };
  else if (choice === 'required') mapped = { type: 'any' };
  else if (isObj(choice) && isObj(choice.function) && typeof choice.function.name === 'string') {
    mapped = { type: 'tool', name: choice.function.name };
  } else if (isObj(choice) && choice.type === 'allowed_tools' && isObj(choice.allowed_tools)) {
    mapped = { type: choice.allowed_tools.mode === 'required' ? 'any' : 'auto' };
  }
  if (parallel === false) {
    if (mapped === undefined) mapped = { type: 'auto' };
    // `none` has no such flag: with no tool calls there is nothing to parallelise.
    if (mapped.type !== 'none') mapped.disable_parallel_tool_use = true;
  }
  return mapped;
}

/** Anthropic has no JSON mode on every model, so the contract is stated in the system prompt. */
function jsonInstruction(format: unknown): string | null {
  if (!isObj(format)) return null;
  if (format.type === 'json_object') {
    return 'Respond with a single valid JSON object only: no prose, no explanations, no Markdown code fences.';
  }
  if (format.type === 'json_schema') {
    const spec = isObj(format.json_schema) ? format.json_schema : {};
    const schema = isObj(spec.schema) ? JSON.stringify(spec.schema) : '{}';
    const name = typeof spec.name === 'string' ? ` named "${spec.name}"` : '';
    return `Respond with a single valid JSON value only: no prose, no explanations, no Markdown code fences. It must conform to this JSON Schema${name}:\n${schema}`;
  }
  return null;
}

function maxTokens(body: ChatRequest, model: string): number {
  for (const v of [body.max_completion_tokens, body.max_tokens]) {
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  }
  return uncappedMaxTokens(model);
}

function stopSequences(stop: unknown): string[] {
  const list = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : [];
  // Anthropic rejects whitespace-only stop sequences; OpenAI accepts and never matches them usefully.
  return list.filter((s): s is string => typeof s === 'string' && s.trim() !== '');
}

/** The Messages API body for an OpenAI chat request; fields it does not know are not forwarded. */
export function toAnthropicRequest(body: ChatRequest, model: string, stream: boolean): AnthropicRequest {
  if (typeof body.n === 'number' && body.n > 1) {
    throw badRequest('Anthropic models return one choice per request; `n` must be 1.', 'unsupported_parameter', 'n');
  }
  if (!Array.isArray(body.messages)) throw badRequest('messages must be an array.', 'invalid_type', 'messages');
  const mapped = mapMessages(body.messages);
  const json = jsonInstruction(body.response_format);
  if (json !== null) mapped.system.push({ type: 'text', text: json });

  const req: AnthropicRequest = { model, max_tokens: maxTokens(body, model), messages: mapped.messages };
  if (mapped.system.length > 0) {
    // Blocks only when one carries a cache mark; otherwise the one string Anthropic has always taken.
    req.system = mapped.system.some((b) => b.cache_control) ? mapped.system : mapped.system.map((b) => b.text).join('\n\n');
  }
  // OpenAI's range is 0–2 and Anthropic's 0–1; clamping keeps "hot" requests valid rather than failing.
  if (typeof body.temperature === 'number') req.temperature = Math.min(1, Math.max(0, body.temperature));
  if (typeof body.top_p === 'number') req.top_p = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop.length > 0) req.stop_sequences = stop;
  const tools = mapTools(body.tools);
  if (tools.length > 0) {
    req.tools = tools;
    const choice = mapToolChoice(body.tool_choice, body.parallel_tool_calls);
    if (choice) req.tool_choice = choice;
  }
  if (stream) req.stream = true;
  return req;
}

export function chatRequest(body: ChatRequest, ctx: CallContext): UpstreamRequest {
  return {
    method: 'POST',
    url: `${anthropicBase(ctx.provider.baseUrl)}/v1/messages`,
    // A client's `anthropic-beta` (e.g. a prompt-caching or 1M-context beta) reaches Anthropic as sent.
    headers: { ...anthropicHeaders(ctx.apiKey, true), ...(ctx.forwardHeaders?.['anthropic-beta'] ? { 'anthropic-beta': ctx.forwardHeaders['anthropic-beta'] } : {}) },
    body: JSON.stringify(toAnthropicRequest(body, ctx.model, ctx.stream)),
  };
}
