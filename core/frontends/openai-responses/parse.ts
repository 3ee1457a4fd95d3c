/**
 * A Responses request body → the neutral `CallRequest`. Conversation items become messages: assistant-side
 * items in a row (reasoning, text, function and custom tool calls) form one assistant turn, tool outputs in
 * a row one tool turn; `system`/`developer` messages and `instructions` become the system text.
 * What only a Responses upstream understands (`store`, `include`, `prompt_cache_key`, built-in tools...)
 * stays in `raw` for the native pass-through; `bridgeLimits` says what a translated call cannot honour.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ZodError } from 'zod';
import { badRequest } from '../../errors.ts';
import type { GatewayError } from '../../errors.ts';
import type {
  CallMessage,
  CallRequest,
  ContentPart,
  ImagePart,
  OpaqueData,
  ReasoningRequest,
  ResponseFormat,
  TextPart,
  ToolChoice,
  ToolDefinition,
} from '../../pipeline/call-model.ts';
import { narrowToAllowed } from '../allowed-tools.ts';
import { decodeOpaque } from '../opaque.ts';
import { itemSchemas, responsesRequestSchema } from './request-schema.ts';
import type { ItemType, ResponsesContentPart, ResponsesInputItem, ResponsesRequest } from './request-schema.ts';

/** Body fields the neutral model reads; the rest go to `extra`. */
const KNOWN = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning', 'text',
  'max_output_tokens', 'temperature', 'top_p', 'stream', 'service_tier', 'user',
]);

/**
 * Output items of built-in (server-side) tools. They only mean something to OpenAI itself: a translated
 * call drops them from the history (the model sees the conversation without them).
 */
const BUILTIN_ITEM = /^(web_search_call|file_search_call|computer_call|computer_call_output|code_interpreter_call|image_generation_call|local_shell_call|local_shell_call_output|shell_call|shell_call_output|mcp_call|mcp_list_tools|mcp_approval_request|mcp_approval_response|tool_search_call|tool_search_output)$/;

export function zodToBadRequest(err: ZodError, body: unknown): GatewayError {
  const issue = err.issues[0];
  const param = issue.path.length > 0 ? issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i > 0 ? '.' : ''}${String(p)}`)).join('') : null;
  let value: unknown = body;
  for (const k of issue.path) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[k as PropertyKey] : undefined;
  // The gateway's codes (DESIGN's error table), as the chat front end gives them.
  if (issue.code === 'invalid_type' && value === undefined) {
    return badRequest(`Missing required parameter: '${param}'.`, 'missing_parameter', param);
  }
  const expected = issue.code === 'invalid_union' ? unionTypes(issue.errors) : null;
  if (expected !== null) return badRequest(`Invalid type for '${param ?? 'body'}': expected ${expected.join(' or ')}, but got ${typeName(value)}.`, 'invalid_type', param);
  return badRequest(`Invalid value for '${param ?? 'body'}': ${issue.message}.`, issue.code === 'invalid_type' ? 'invalid_type' : 'invalid_value', param);
}

/** The types a union accepts, when the value failed every branch on its type alone (`"input": 5`); else null. */
function unionTypes(branches: ReadonlyArray<ReadonlyArray<{ code: string; path: ReadonlyArray<PropertyKey>; expected?: unknown }>>): string[] | null {
  const types: string[] = [];
  for (const issues of branches) {
    const first = issues[0];
    if (first === undefined || first.code !== 'invalid_type' || first.path.length > 0) return null;
    types.push(String(first.expected));
  }
  return types.length > 0 ? [...new Set(types)] : null;
}

const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export function parseResponsesRequest(body: Record<string, unknown>, headers: IncomingHttpHeaders): CallRequest {
  const parsed = responsesRequestSchema.safeParse(body);
  if (!parsed.success) throw zodToBadRequest(parsed.error, body);
  const r = parsed.data;
  if (r.input === undefined && !r.previous_response_id) throw badRequest("Missing required parameter: 'input'.", 'missing_parameter', 'input');

  const system: TextPart[] = [];
  if (r.instructions) system.push({ type: 'text', text: r.instructions });
  const messages = typeof r.input === 'string' ? [{ role: 'user' as const, content: [{ type: 'text' as const, text: r.input }] }] : conversation(r.input ?? [], system);

  const extra: Record<string, unknown> = {};
  for (const k in body) if (!KNOWN.has(k)) extra[k] = body[k];
  const forwardHeaders: Record<string, string> = {};
  for (const h of ['openai-beta', 'session_id', 'x-openai-subagent']) {
    const v = headers[h];
    if (typeof v === 'string') forwardHeaders[h] = v;
  }

  return {
    inbound: 'openai-responses',
    model: r.model,
    system,
    messages,
    ...toolsAndChoice(r),
    parallelToolCalls: r.parallel_tool_calls ?? undefined,
    maxOutputTokens: r.max_output_tokens ?? null,
    temperature: r.temperature ?? undefined,
    topP: r.top_p ?? undefined,
    n: 1,
    reasoning: reasoning(r),
    responseFormat: responseFormat(r),
    stream: r.stream === true,
    streamUsage: true,
    serviceTier: r.service_tier ?? undefined,
    extra,
    forwardHeaders,
    raw: body,
  };
}

function textOf(content: string | ResponsesContentPart[], at: string): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p, i): ContentPart => {
    switch (p.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: p.text };
      case 'refusal':
        return { type: 'text', text: p.refusal };
      case 'input_image':
        return image(p, `${at}[${i}]`);
      case 'input_file':
        return { type: 'document', protocol: 'openai-responses', raw: p };
    }
  });
}

function image(p: Extract<ResponsesContentPart, { type: 'input_image' }>, at: string): ImagePart | ContentPart {
  if (typeof p.image_url === 'string' && p.image_url !== '') {
    return { type: 'image', source: { kind: 'url', url: p.image_url }, ...(p.detail ? { detail: p.detail } : {}) };
  }
  if (typeof p.file_id === 'string') return { type: 'document', protocol: 'openai-responses', raw: p };
  throw badRequest(`Invalid '${at}': an input_image needs an image_url or a file_id.`, 'invalid_value', at);
}

function toolResultContent(output: string | ResponsesContentPart[], at: string): string | Array<TextPart | ImagePart> {
  if (typeof output === 'string') return output;
  return textOf(output, at).filter((p): p is TextPart | ImagePart => p.type === 'text' || p.type === 'image');
}

/** Checks an item against the schema of its type; a mistake is a 400 naming the item's field. */
function checkItem(raw: { type?: string }, i: number): ResponsesInputItem | null {
  const type = raw.type ?? 'message';
  if (!Object.hasOwn(itemSchemas, type)) return null;
  const parsed = itemSchemas[type as ItemType].safeParse(raw);
  if (parsed.success) return parsed.data as ResponsesInputItem;
  const issue = zodToBadRequest(parsed.error, raw);
  const param = `input[${i}]${issue.param ? `.${issue.param}` : ''}`;
  return throwBad(issue.message.replace(/'([^']*)'/, `'${param}'`), issue.code ?? 'invalid_value', param);
}

const throwBad = (message: string, code: string, param: string): never => {
  throw badRequest(message, code, param);
};

function conversation(rawItems: Array<{ type?: string }>, system: TextPart[]): CallMessage[] {
  const out: CallMessage[] = [];
  const turn = (role: 'assistant' | 'tool'): ContentPart[] => {
    const last = out.at(-1);
    if (last?.role === role) return last.content;
    const m: CallMessage = { role, content: [] };
    out.push(m);
    return m.content;
  };
  let signature: OpaqueData | undefined;
  const takeSignature = (): { opaque?: OpaqueData } => {
    const s = signature;
    signature = undefined;
    return s ? { opaque: s } : {};
  };
  rawItems.forEach((rawItem, i) => {
    const at = `input[${i}]`;
    const type = rawItem.type ?? 'message';
    const item = checkItem(rawItem, i) as ResponsesInputItem;
    switch (type) {
      case 'message': {
        const m = item as Extract<ResponsesInputItem, { role: string }>;
        const parts = textOf(m.content, `${at}.content`);
        if (m.role === 'system' || m.role === 'developer') {
          for (const p of parts) if (p.type === 'text') system.push(p);
        } else if (m.role === 'assistant') {
          turn('assistant').push(...parts);
        } else {
          out.push({ role: 'user', content: parts });
        }
        return;
      }
      case 'function_call': {
        const c = item as Extract<ResponsesInputItem, { type: 'function_call' }>;
        turn('assistant').push({ type: 'tool-call', id: c.call_id, name: c.name, arguments: c.arguments, kind: 'function', ...takeSignature() });
        return;
      }
      case 'custom_tool_call': {
        const c = item as Extract<ResponsesInputItem, { type: 'custom_tool_call' }>;
        turn('assistant').push({ type: 'tool-call', id: c.call_id, name: c.name, arguments: c.input, kind: 'custom', ...takeSignature() });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const o = item as Extract<ResponsesInputItem, { type: 'function_call_output' }>;
        const kind = type === 'custom_tool_call_output' ? 'custom' : 'function';
        turn('tool').push({ type: 'tool-result', callId: o.call_id, content: toolResultContent(o.output, `${at}.output`), kind });
        return;
      }
      case 'reasoning': {
        const r = item as Extract<ResponsesInputItem, { type: 'reasoning' }>;
        const text = [...r.summary, ...(r.content ?? [])].map((s) => s.text).join('\n\n');
        const opaque = r.encrypted_content ? decodeOpaque(r.encrypted_content) : undefined;
        if (opaque?.origin === 'gemini') {
          // A tool call's thought signature (signatureItem): it belongs to the call that follows.
          signature = opaque;
          if (text !== '') turn('assistant').push({ type: 'reasoning', text });
          return;
        }
        turn('assistant').push({
          type: 'reasoning',
          text,
          ...(r.encrypted_content ? { opaque: decodeOpaque(r.encrypted_content) } : {}),
          ...(r.id ? { itemId: r.id } : {}),
        });
        return;
      }
      case 'item_reference':
        // Only the upstream that stored the item can resolve it: `bridgeLimits` keeps such calls native.
        return;
      default:
        // A built-in tool's item, or one newer than this gateway (Codex's `additional_tools`): a native upstream gets
        // it in the body as sent; `bridgeLimits` keeps a call that carries an unknown one off translated upstreams.
        return;
    }
  });
  return out;
}

function tools(r: ResponsesRequest): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (const t of r.tools ?? []) {
    if (t.type === 'function') {
      const f = t as { name: string; description?: string | null; parameters?: Record<string, unknown> | null; strict?: boolean | null };
      out.push({
        kind: 'function',
        name: f.name,
        ...(f.description ? { description: f.description } : {}),
        ...(f.parameters ? { parameters: f.parameters } : {}),
        ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
      });
    } else if (t.type === 'custom') {
      const c = t as { name: string; description?: string | null; format?: Record<string, unknown> | null };
      out.push({ kind: 'custom', name: c.name, ...(c.description ? { description: c.description } : {}), ...(c.format ? { format: c.format } : {}) });
    }
    // Built-in tools are not in the neutral model: see `bridgeLimits`.
  }
  return out;
}

function toolsAndChoice(r: ResponsesRequest): { tools: ToolDefinition[]; toolChoice?: ToolChoice } {
  const all = tools(r);
  const c = r.tool_choice;
  if (c === null || c === undefined) return { tools: all };
  if (typeof c === 'string') return { tools: all, toolChoice: { type: c } };
  if ((c.type === 'function' || c.type === 'custom') && typeof c.name === 'string') return { tools: all, toolChoice: { type: 'tool', name: c.name } };
  if (c.type === 'allowed_tools') {
    const a = c as { mode?: unknown; tools?: unknown };
    const names = (Array.isArray(a.tools) ? a.tools : []).flatMap((x: unknown) => (x !== null && typeof x === 'object' && typeof (x as { name?: unknown }).name === 'string' ? [(x as { name: string }).name] : []));
    return narrowToAllowed(all, names, a.mode, 'tool_choice');
  }
  return { tools: all };
}

function reasoning(r: ResponsesRequest): ReasoningRequest | undefined {
  if (!r.reasoning) return undefined;
  const out: ReasoningRequest = {};
  if (r.reasoning.effort) out.effort = r.reasoning.effort;
  if (r.reasoning.summary) out.summary = r.reasoning.summary;
  return out;
}

function responseFormat(r: ResponsesRequest): ResponseFormat | undefined {
  const f = r.text?.format;
  if (!f) return undefined;
  if (f.type === 'json_schema') {
    const s = f as { name: string; schema: Record<string, unknown>; strict?: boolean | null };
    return { type: 'json_schema', name: s.name, schema: s.schema, ...(typeof s.strict === 'boolean' ? { strict: s.strict } : {}) };
  }
  return { type: f.type };
}

/** Built-in tool types (server-side tools only OpenAI runs). */
export const builtinToolTypes = (body: Record<string, unknown>): string[] => {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ type?: unknown }>) : [];
  return tools.map((t) => String(t?.type)).filter((t) => t !== 'function' && t !== 'custom');
};

/**
 * What a call translated for a non-Responses upstream cannot honour. Refused (400, named): server-side
 * state (`previous_response_id`, `conversation`, `background`) and a `tool_choice` forcing a built-in tool.
 * Built-in tools themselves are dropped, and the response says which (`x-gateway-dropped-tools`), since
 * clients such as Codex declare `web_search` by default and would otherwise never work on a bridged model.
 */
export function bridgeLimits(body: Record<string, unknown>): { droppedTools: string[] } {
  if (typeof body.previous_response_id === 'string' && body.previous_response_id !== '') {
    throw badRequest(
      "'previous_response_id' needs a response stored on the server, and the gateway stores none for models it translates. Send the full history with store: false instead (as Codex does).",
      'unsupported_parameter',
      'previous_response_id',
    );
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw badRequest("'conversation' needs server-side storage, which the gateway does not keep for translated models. Send the full history instead.", 'unsupported_parameter', 'conversation');
  }
  const items = Array.isArray(body.input) ? (body.input as Array<{ type?: unknown }>) : [];
  const unknown = items.findIndex((i) => typeof i?.type === 'string' && !Object.hasOwn(itemSchemas, i.type) && i.type !== 'item_reference' && !BUILTIN_ITEM.test(i.type));
  if (unknown >= 0) {
    throw badRequest(
      `Invalid 'input[${unknown}].type': unknown input item type '${String(items[unknown].type)}'. Only a provider that speaks Responses itself (OpenAI, Azure) can take it; this model is served by one the gateway translates for.`,
      'invalid_value',
      `input[${unknown}].type`,
    );
  }
  const ref = items.findIndex((i) => i?.type === 'item_reference');
  if (ref >= 0) {
    throw badRequest(
      `Invalid 'input[${ref}]': item references need responses stored on the server, and the gateway stores none for models it translates. Send the items themselves (store: false with the full history).`,
      'unsupported_value',
      `input[${ref}]`,
    );
  }
  if (body.background === true) {
    throw badRequest("'background' responses are not supported by the gateway for translated models.", 'unsupported_parameter', 'background');
  }
  const dropped = builtinToolTypes(body);
  const choice = body.tool_choice as { type?: unknown } | string | undefined | null;
  if (choice && typeof choice === 'object' && typeof choice.type === 'string' && !['function', 'custom', 'allowed_tools'].includes(choice.type)) {
    throw badRequest(
      `'tool_choice' forces the built-in tool '${choice.type}', which only OpenAI runs; this model is served by a provider without it.`,
      'unsupported_value',
      'tool_choice',
    );
  }
  return { droppedTools: dropped };
}
