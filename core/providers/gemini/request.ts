/**
 * OpenAI chat request → Gemini `generateContent` request (protocol.md §10.2), plus the URL and
 * headers every Gemini call shares.
 */
import { Buffer } from 'node:buffer';
import { badRequest } from '../../errors.ts';
import type { CallContext, ChatRequest, UpstreamRequest } from '../types.ts';
import { UnsupportedInputError } from './errors.ts';
import { PLACEHOLDER_THOUGHT_SIGNATURE, thoughtSignatureOf } from './tool-ids.ts';
import type {
  GeminiContent,
  GeminiFunctionCallingMode,
  GeminiFunctionDeclaration,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiRole,
  GeminiSchema,
  GeminiThinkingConfig,
  GeminiToolConfig,
  GenerateContentRequest,
} from './wire.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

// ---- endpoint ----

/** The API root: users paste the base URL with or without the `/v1beta` version segment. */
export function geminiRoot(baseUrl: string): string {
  let b = baseUrl.trim().replace(/\/+$/, '');
  if (b.endsWith('/v1beta')) b = b.slice(0, -'/v1beta'.length);
  return b;
}

/** Model ids arrive as `gemini-x` or as the resource name `models/gemini-x`. */
export const bareModel = (model: string): string => (model.startsWith('models/') ? model.slice('models/'.length) : model);

/** The model's resource path; tuned models live in their own collection. */
export function modelResource(model: string): string {
  const m = bareModel(model);
  if (m.startsWith('tunedModels/')) return m.split('/').map(encodeURIComponent).join('/');
  return `models/${encodeURIComponent(m)}`;
}

export const geminiUrl = (baseUrl: string, path: string): string => `${geminiRoot(baseUrl)}/v1beta/${path}`;

export function geminiHeaders(apiKey: string | null, json: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  if (json) h['content-type'] = 'application/json';
  if (apiKey) h['x-goog-api-key'] = apiKey;
  return h;
}

/** `thinking`: the thinking asked for in another protocol's terms (a budget), over what the chat body says. */
export function chatRequest(body: ChatRequest, ctx: CallContext, thinking?: GeminiThinkingConfig): UpstreamRequest {
  const action = ctx.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  const out = toGenerateContent(body);
  if (thinking) out.generationConfig = { ...out.generationConfig, thinkingConfig: thinking };
  return {
    method: 'POST',
    url: geminiUrl(ctx.provider.baseUrl, `${modelResource(ctx.model)}:${action}`),
    headers: geminiHeaders(ctx.apiKey, true),
    body: JSON.stringify(out),
  };
}

/**
 * The request body. Parameters without a Gemini equivalent are dropped: `user`, `logprobs`,
 * `logit_bias`, `parallel_tool_calls`, `stream_options`, `store`, `metadata`, `service_tier`, and the
 * penalties (several Gemini models reject them with a 400, so forwarding them would break callers that
 * set them by habit).
 */
export function toGenerateContent(body: ChatRequest): GenerateContentRequest {
  const { contents, system } = mapMessages(Array.isArray(body.messages) ? body.messages : []);
  const out: GenerateContentRequest = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };
  const { declarations, toolConfig } = mapTools(body);
  if (declarations.length > 0) {
    out.tools = [{ functionDeclarations: declarations }];
    if (toolConfig) out.toolConfig = toolConfig;
  }
  const generationConfig = mapGenerationConfig(body);
  if (Object.keys(generationConfig).length > 0) out.generationConfig = generationConfig;
  return out;
}

// ---- messages ----

interface MappedMessages {
  contents: GeminiContent[];
  system: GeminiPart[];
}

/**
 * Walks the conversation once. Gemini knows only `user` and `model` turns, so system text is lifted
 * into `systemInstruction` (all system messages, in order, wherever they appear), tool results become
 * user turns, and consecutive turns of one role are merged because Gemini expects them to alternate.
 */
function mapMessages(messages: unknown[]): MappedMessages {
  const contents: GeminiContent[] = [];
  const system: GeminiPart[] = [];
  // Gemini's function responses are matched by name; OpenAI's tool results by id.
  const nameById = new Map<string, string>();

  const push = (role: GeminiRole, parts: GeminiPart[]): void => {
    if (parts.length === 0) return; // Gemini rejects turns without parts.
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((raw, i) => {
    const path = `messages[${i}]`;
    if (!isObj(raw)) throw badRequest(`${path} must be an object.`, 'invalid_type', path);
    switch (raw.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(raw.content, `${path}.content`));
        return;
      case 'user':
        push('user', userParts(raw.content, `${path}.content`));
        return;
      case 'assistant':
        push('model', assistantParts(raw, path, nameById));
        return;
      case 'tool':
        push('user', [toolResultPart(raw, path, nameById)]);
        return;
      case 'function': {
        // The deprecated function-calling protocol names the function on the result itself.
        const name = typeof raw.name === 'string' ? raw.name : '';
        if (!name) throw badRequest(`${path}.name is required for role "function".`, 'missing_parameter', `${path}.name`);
        push('user', [{ functionResponse: { name, response: functionResponseBody(contentText(raw.content)) } }]);
        return;
      }
      default:
        throw badRequest(`${path}.role ${JSON.stringify(raw.role)} is not a valid role.`, 'invalid_value', `${path}.role`);
    }
  });
  return { contents, system };
}

/** The text of string content or of an array's text (and refusal) parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const p of content) {
    if (!isObj(p)) continue;
    if (p.type === 'text' && typeof p.text === 'string') out += p.text;
    else if (p.type === 'refusal' && typeof p.refusal === 'string') out += p.refusal;
  }
  return out;
}

/** Gemini rejects empty text parts ("empty text parameter"), so empty strings produce no part. */
function textParts(content: unknown, path: string): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (content === null || content === undefined) return [];
  if (!Array.isArray(content)) throw badRequest(`${path} must be a string or an array of content parts.`, 'invalid_type', path);
  const parts: GeminiPart[] = [];
  content.forEach((p, j) => {
    if (!isObj(p)) return;
    const text = p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : undefined;
    if (typeof text === 'string' && text !== '') parts.push({ text });
    else if (p.type !== 'text' && p.type !== 'refusal') {
      throw new UnsupportedInputError(`Content part type ${JSON.stringify(p.type)} is not allowed here.`, `${path}[${j}]`);
    }
  });
  return parts;
}

function userParts(content: unknown, path: string): GeminiPart[] {
  if (typeof content === 'string' || content === null || content === undefined) return textParts(content, path);
  if (!Array.isArray(content)) throw badRequest(`${path} must be a string or an array of content parts.`, 'invalid_type', path);
  const parts: GeminiPart[] = [];
  content.forEach((p, j) => {
    const at = `${path}[${j}]`;
    if (!isObj(p)) throw badRequest(`${at} must be an object.`, 'invalid_type', at);
    switch (p.type) {
      case 'text':
        if (typeof p.text === 'string' && p.text !== '') parts.push({ text: p.text });
        return;
      case 'image_url': {
        const url = isObj(p.image_url) ? p.image_url.url : p.image_url;
        if (typeof url !== 'string' || url === '') throw badRequest(`${at}.image_url.url is required.`, 'missing_parameter', `${at}.image_url.url`);
        parts.push(mediaPart(url));
        return;
      }
      case 'input_audio': {
        const audio = isObj(p.input_audio) ? p.input_audio : {};
        if (typeof audio.data !== 'string') throw badRequest(`${at}.input_audio.data is required.`, 'missing_parameter', `${at}.input_audio.data`);
        const format = typeof audio.format === 'string' ? audio.format : 'wav';
        parts.push({ inlineData: { mimeType: `audio/${format}`, data: audio.data } });
        return;
      }
      case 'file': {
        const file = isObj(p.file) ? p.file : {};
        if (typeof file.file_data === 'string' && file.file_data !== '') {
          const filename = typeof file.filename === 'string' ? file.filename : '';
          parts.push(
            file.file_data.startsWith('data:')
              ? mediaPart(file.file_data)
              : { inlineData: { mimeType: mimeFromName(filename) ?? 'application/pdf', data: file.file_data } },
          );
          return;
        }
        throw new UnsupportedInputError('Gemini cannot read OpenAI file ids; send the file inline as `file_data`.', `${at}.file`);
      }
      default:
        throw new UnsupportedInputError(`Content part type ${JSON.stringify(p.type)} is not supported by Gemini.`, at);
    }
  });
  return parts;
}

const MIME_BY_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  mp4: 'video/mp4',
};

function mimeFromName(name: string): string | undefined {
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return ext ? MIME_BY_EXT[ext] : undefined;
}

/** Data URLs become inline bytes; any other URL is passed as a file reference (best effort). */
function mediaPart(url: string): GeminiPart {
  const m = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (m) {
    const mimeType = m[1] || 'application/octet-stream';
    const data = /;base64/i.test(m[2]) ? m[3] : Buffer.from(decodeURIComponent(m[3])).toString('base64');
    return { inlineData: { mimeType, data } };
  }
  const mimeType = mimeFromName(url.split(/[?#]/)[0]);
  return { fileData: mimeType ? { fileUri: url, mimeType } : { fileUri: url } };
}

function parseArgs(raw: unknown): Record<string, unknown> {
  if (isObj(raw)) return raw;
  if (typeof raw !== 'string' || raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isObj(parsed)) return parsed;
  } catch {
    // Not JSON: a history produced elsewhere; keep the text rather than lose it.
  }
  // Gemini's `args` must be an object.
  return { arguments: raw };
}

function assistantParts(msg: Obj, path: string, nameById: Map<string, string>): GeminiPart[] {
  const parts = textParts(msg.content, `${path}.content`);
  const calls: GeminiPart[] = [];
  if (Array.isArray(msg.tool_calls)) {
    msg.tool_calls.forEach((tc, j) => {
      const at = `${path}.tool_calls[${j}]`;
      if (!isObj(tc) || !isObj(tc.function)) throw badRequest(`${at} must be a function tool call.`, 'invalid_type', at);
      const name = tc.function.name;
      if (typeof name !== 'string' || name === '') throw badRequest(`${at}.function.name is required.`, 'missing_parameter', `${at}.function.name`);
      if (typeof tc.id === 'string') nameById.set(tc.id, name);
      const part: GeminiPart = { functionCall: { name, args: parseArgs(tc.function.arguments) } };
      const sig = thoughtSignatureOf(tc);
      if (sig !== undefined) part.thoughtSignature = sig;
      calls.push(part);
    });
  } else if (isObj(msg.function_call) && typeof msg.function_call.name === 'string') {
    calls.push({ functionCall: { name: msg.function_call.name, args: parseArgs(msg.function_call.arguments) } });
  }
  // Gemini 3 wants a signature on the first call of each step; Google documents this placeholder
  // for histories that lost it (or never had one: calls made by another provider).
  if (calls.length > 0 && !calls.some((c) => c.thoughtSignature !== undefined)) {
    calls[0].thoughtSignature = PLACEHOLDER_THOUGHT_SIGNATURE;
  }
  return [...parts, ...calls];
}

/** A JSON object result is passed as is; anything else is wrapped, since `response` must be an object. */
function functionResponseBody(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObj(parsed)) return parsed;
  } catch {
    // plain text result
  }
  return { content: text };
}

function toolResultPart(msg: Obj, path: string, nameById: Map<string, string>): GeminiPart {
  const id = msg.tool_call_id;
  const name = (typeof id === 'string' ? nameById.get(id) : undefined) ?? (typeof msg.name === 'string' ? msg.name : undefined);
  if (name === undefined) {
    throw badRequest(
      `${path}.tool_call_id ${JSON.stringify(id)} does not match any earlier assistant tool call; Gemini needs the function name.`,
      'invalid_value',
      `${path}.tool_call_id`,
    );
  }
  return { functionResponse: { name, response: functionResponseBody(contentText(msg.content)) } };
}

// ---- tools ----

interface MappedTools {
  declarations: GeminiFunctionDeclaration[];
  toolConfig?: GeminiToolConfig;
}

function declaration(fn: Obj, at: string): GeminiFunctionDeclaration {
  if (typeof fn.name !== 'string' || fn.name === '') throw badRequest(`${at}.name is required.`, 'missing_parameter', `${at}.name`);
  const d: GeminiFunctionDeclaration = { name: fn.name };
  if (typeof fn.description === 'string' && fn.description !== '') d.description = fn.description;
  const parameters = toGeminiParameters(fn.parameters);
  if (parameters !== undefined) d.parameters = parameters;
  return d;
}

function mapTools(body: ChatRequest): MappedTools {
  let declarations: GeminiFunctionDeclaration[] = [];
  if (Array.isArray(body.tools)) {
    body.tools.forEach((t, j) => {
      const at = `tools[${j}]`;
      if (!isObj(t)) throw badRequest(`${at} must be an object.`, 'invalid_type', at);
      if (t.type !== 'function' || !isObj(t.function)) {
        throw new UnsupportedInputError(`Tool type ${JSON.stringify(t.type)} is not supported by Gemini; only function tools are.`, at);
      }
      declarations.push(declaration(t.function, `${at}.function`));
    });
  } else if (Array.isArray(body.functions)) {
    body.functions.forEach((f, j) => {
      if (isObj(f)) declarations.push(declaration(f, `functions[${j}]`));
    });
  }

  const choice = body.tool_choice ?? body.function_call;
  let mode: GeminiFunctionCallingMode | undefined;
  let allowed: string[] | undefined;
  if (choice === 'none') mode = 'NONE';
  else if (choice === 'auto') mode = 'AUTO';
  else if (choice === 'required') mode = 'ANY';
  else if (isObj(choice)) {
    if (choice.type === 'custom') throw new UnsupportedInputError('Custom tools are not supported by Gemini.', 'tool_choice');
    if (choice.type === 'allowed_tools' && isObj(choice.allowed_tools)) {
      const names = (Array.isArray(choice.allowed_tools.tools) ? choice.allowed_tools.tools : [])
        .map((t) => (isObj(t) && isObj(t.function) ? t.function.name : undefined))
        .filter((n): n is string => typeof n === 'string');
      if (choice.allowed_tools.mode === 'required') {
        mode = 'ANY';
        allowed = names;
      } else {
        // Gemini only restricts names in ANY mode; in AUTO the other tools are simply not offered.
        mode = 'AUTO';
        declarations = declarations.filter((d) => names.includes(d.name));
      }
    } else {
      // `{type:"function",function:{name}}`, or the legacy `function_call: {name}`.
      const name = isObj(choice.function) ? choice.function.name : choice.name;
      if (typeof name === 'string') {
        mode = 'ANY';
        allowed = [name];
      }
    }
  }
  if (mode === undefined) return { declarations };
  const toolConfig: GeminiToolConfig = { functionCallingConfig: { mode } };
  if (allowed !== undefined && allowed.length > 0) toolConfig.functionCallingConfig.allowedFunctionNames = allowed;
  return { declarations, toolConfig };
}

// ---- JSON Schema → Gemini schema ----

/**
 * Gemini takes an OpenAPI 3.0 subset and answers 400 ("Unknown name ...") to anything else, so the
 * schema is rebuilt from an allow-list rather than filtered by a deny-list. Kept as is: type, title,
 * description, nullable, enum (strings), items, properties, required, min/maxItems, min/maxProperties,
 * min/maxLength, pattern, minimum, maximum, anyOf, propertyOrdering, default, example.
 * Rewritten: local `$ref`s are inlined (`$defs`/`definitions`; a recursive reference becomes a bare
 * object), `allOf` is merged, `oneOf` becomes `anyOf`, `const` becomes a one-value `enum`, type arrays
 * and `null` branches become `nullable`, `examples[0]` becomes `example`, `required` is cut to the
 * declared properties, and `format` survives only where Gemini knows it (string: enum, date-time;
 * number/integer: float, double, int32, int64).
 * Dropped: `$schema`, `$id`, `$comment`, `additionalProperties`, `strict`, `patternProperties`,
 * `unevaluatedProperties`, `exclusiveMinimum`/`exclusiveMaximum`, `multipleOf`, `not`,
 * `if`/`then`/`else`, non-string enums, and every other keyword. An object with no properties loses
 * its empty `properties` (Gemini rejects "properties: should be non-empty for OBJECT type").
 */
export function toGeminiSchema(schema: unknown): GeminiSchema {
  return convertSchema(schema, isObj(schema) ? schema : {}, [], 0);
}

/** Function parameters; undefined for a function without arguments, which Gemini wants omitted. */
export function toGeminiParameters(schema: unknown): GeminiSchema | undefined {
  if (!isObj(schema)) return undefined;
  const out = toGeminiSchema(schema);
  if (Object.keys(out).length === 0) return undefined;
  if (out.type === 'object' && out.properties === undefined) return undefined;
  return out;
}

const COPIED = [
  'title',
  'description',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'default',
  'example',
] as const;

const FORMATS: Record<string, Set<string>> = {
  string: new Set(['enum', 'date-time']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
};

const MAX_DEPTH = 48;

function resolveRef(ref: string, root: Obj): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObj(node) ? node[key] : undefined;
  }
  return node;
}

/** Merges `b` into `a` for `allOf`: properties and required are unioned, other keys keep the first value. */
function mergeSchemas(a: GeminiSchema, b: GeminiSchema): GeminiSchema {
  const out: GeminiSchema = { ...b, ...a };
  if (isObj(a.properties) || isObj(b.properties)) out.properties = { ...(isObj(b.properties) ? b.properties : {}), ...(isObj(a.properties) ? a.properties : {}) };
  const req = [...(Array.isArray(a.required) ? a.required : []), ...(Array.isArray(b.required) ? b.required : [])];
  if (req.length > 0) out.required = [...new Set(req)];
  return out;
}

function convertSchema(node: unknown, root: Obj, refs: string[], depth: number): GeminiSchema {
  if (!isObj(node) || depth > MAX_DEPTH) return {};
  let out: GeminiSchema = {};

  if (typeof node.$ref === 'string') {
    if (refs.includes(node.$ref)) out = { type: 'object' };
    else out = convertSchema(resolveRef(node.$ref, root), root, [...refs, node.$ref], depth + 1);
  }
  if (Array.isArray(node.allOf)) {
    for (const sub of node.allOf) out = mergeSchemas(out, convertSchema(sub, root, refs, depth + 1));
  }

  const branches = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : null;
  if (branches) {
    const converted = branches.map((b) => convertSchema(b, root, refs, depth + 1));
    const isNull = (s: GeminiSchema): boolean => s.type === 'null' || (s.nullable === true && Object.keys(s).length === 1);
    const nonNull = converted.filter((s) => !isNull(s));
    if (nonNull.length < converted.length) out.nullable = true;
    if (nonNull.length === 1) out = mergeSchemas(out, nonNull[0]);
    else if (nonNull.length > 1) out.anyOf = nonNull;
  }

  if (typeof node.type === 'string') {
    if (node.type === 'null') out.nullable = true;
    else out.type = node.type;
  } else if (Array.isArray(node.type)) {
    const types = node.type.filter((t): t is string => typeof t === 'string' && t !== 'null');
    if (types.length < node.type.length) out.nullable = true;
    if (types.length === 1) out.type = types[0];
    else if (types.length > 1) out.anyOf = types.map((t) => ({ type: t }));
  }
  if (node.nullable === true) out.nullable = true;

  for (const key of COPIED) if (node[key] !== undefined) out[key] = node[key];
  if (out.example === undefined && Array.isArray(node.examples) && node.examples.length > 0) out.example = node.examples[0];
  if (Array.isArray(node.propertyOrdering)) out.propertyOrdering = node.propertyOrdering;

  const enumValues = node.const !== undefined ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined;
  if (enumValues !== undefined) {
    const strings = enumValues.filter((v): v is string => typeof v === 'string');
    if (enumValues.includes(null)) out.nullable = true;
    if (strings.length > 0 && strings.length === enumValues.filter((v) => v !== null).length) {
      out.enum = strings;
      if (out.type === undefined) out.type = 'string';
    }
  }

  if (typeof node.format === 'string' && typeof out.type === 'string' && FORMATS[out.type]?.has(node.format)) out.format = node.format;

  if (isObj(node.properties)) {
    const props: Record<string, GeminiSchema> = isObj(out.properties) ? (out.properties as Record<string, GeminiSchema>) : {};
    for (const [k, v] of Object.entries(node.properties)) props[k] = convertSchema(v, root, refs, depth + 1);
    out.properties = props;
  }
  if (isObj(out.properties) && Object.keys(out.properties).length === 0) delete out.properties;

  if (Array.isArray(node.required)) {
    const req = [...(Array.isArray(out.required) ? out.required : []), ...node.required];
    out.required = [...new Set(req)];
  }
  if (Array.isArray(out.required)) {
    const props = isObj(out.properties) ? out.properties : {};
    const req = out.required.filter((r): r is string => typeof r === 'string' && r in props);
    if (req.length > 0) out.required = req;
    else delete out.required;
  }

  // Tuple `items` arrays have no Gemini form; the first item's schema is the closest.
  const items = Array.isArray(node.items) ? node.items[0] : node.items;
  if (isObj(items)) out.items = convertSchema(items, root, refs, depth + 1);

  return out;
}

// ---- generation config ----

/**
 * `reasoning_effort` → `thinkingConfig.thinkingBudget`. The budgets sit inside every 2.5 model's
 * accepted range (Flash-Lite's minimum is 512, Flash's maximum 24576); Gemini 3 still accepts a
 * budget. `none` asks for no thinking, which 2.5 Pro refuses with a 400 (it cannot turn thinking off).
 */
/** The largest thinking budget every 2.5 model takes (Flash's maximum). */
export const MAX_THINKING_BUDGET = 24_576;

export const THINKING_BUDGET: Record<string, number> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: MAX_THINKING_BUDGET,
  xhigh: MAX_THINKING_BUDGET,
  max: MAX_THINKING_BUDGET,
};

function mapGenerationConfig(body: ChatRequest): GeminiGenerationConfig {
  const cfg: GeminiGenerationConfig = {};
  const temperature = finite(body.temperature);
  if (temperature !== undefined) cfg.temperature = temperature;
  const topP = finite(body.top_p);
  if (topP !== undefined) cfg.topP = topP;
  const maxTokens = finite(body.max_completion_tokens) ?? finite(body.max_tokens);
  if (maxTokens !== undefined) cfg.maxOutputTokens = maxTokens;
  if (typeof body.stop === 'string' && body.stop !== '') cfg.stopSequences = [body.stop];
  else if (Array.isArray(body.stop)) {
    const stops = body.stop.filter((s): s is string => typeof s === 'string' && s !== '');
    if (stops.length > 0) cfg.stopSequences = stops;
  }
  const n = finite(body.n);
  if (n !== undefined) cfg.candidateCount = n;
  const seed = finite(body.seed);
  if (seed !== undefined) cfg.seed = seed;

  const rf = body.response_format;
  if (isObj(rf) && (rf.type === 'json_object' || rf.type === 'json_schema')) {
    cfg.responseMimeType = 'application/json';
    if (rf.type === 'json_schema' && isObj(rf.json_schema) && isObj(rf.json_schema.schema)) {
      const schema = toGeminiSchema(rf.json_schema.schema);
      if (Object.keys(schema).length > 0) cfg.responseSchema = schema;
    }
  }

  if (typeof body.reasoning_effort === 'string' && body.reasoning_effort in THINKING_BUDGET) {
    cfg.thinkingConfig = { thinkingBudget: THINKING_BUDGET[body.reasoning_effort] };
  }
  return cfg;
}
