/**
 * A quick yes for the chat requests almost every client sends (text messages, the usual sampling
 * parameters), so the hot path skips the zod walk (~3% of a call's CPU). It answers `true` only when the
 * full schema would accept the body as it is; anything it does not plainly recognise answers `false`,
 * and the caller runs the schema, so the verdicts (and every 400's wording) stay the schema's.
 */
import { MAX_MODEL_NAME_LENGTH } from './common.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const nullish = (v: unknown): boolean => v === null || v === undefined;
const num = (min: number, max: number) => (v: unknown): boolean => typeof v === 'number' && v >= min && v <= max;
const int = (min: number, max: number) => (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;
const bool = (v: unknown): boolean => typeof v === 'boolean';
const str = (v: unknown): boolean => typeof v === 'string';
const oneOf = (values: readonly string[]) => (v: unknown): boolean => typeof v === 'string' && values.includes(v);
const streamOptions = (v: unknown): boolean => {
  if (!isObj(v)) return false;
  for (const k in v) if (k !== 'include_usage' || !(nullish(v[k]) || bool(v[k]))) return false;
  return true;
};

/** The top-level parameters checked here (all optional, null meaning absent); any other known one sends the body to the schema. */
const PARAMS = new Map<string, (v: unknown) => boolean>(Object.entries({
  max_completion_tokens: int(1, Number.MAX_SAFE_INTEGER),
  max_tokens: int(1, Number.MAX_SAFE_INTEGER),
  n: int(1, 128),
  temperature: num(0, 2),
  top_p: num(0, 1),
  frequency_penalty: num(-2, 2),
  presence_penalty: num(-2, 2),
  seed: int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  logprobs: bool,
  parallel_tool_calls: bool,
  stream: bool,
  stream_options: streamOptions,
  service_tier: str,
  store: bool,
  user: str,
  reasoning_effort: oneOf(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']),
  verbosity: oneOf(['low', 'medium', 'high']),
}));

/** Known to the schema but left to it (tools, formats, stops...): present and not null, the schema decides. */
const SCHEMA_ONLY = new Set([
  'top_logprobs', 'stop', 'logit_bias', 'response_format', 'tools', 'tool_choice', 'functions', 'function_call', 'metadata', 'modalities',
]);

function textContent(v: unknown): boolean {
  if (typeof v === 'string') return true;
  if (!Array.isArray(v)) return false;
  for (const p of v) if (!isObj(p) || p.type !== 'text' || typeof p.text !== 'string') return false;
  return true;
}

function message(m: unknown): boolean {
  if (!isObj(m)) return false;
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      return textContent(m.content) && (nullish(m.name) || str(m.name));
    case 'assistant':
      // Tool calls, refusals and function calls go to the schema.
      return (nullish(m.content) || textContent(m.content)) && nullish(m.name) && nullish(m.refusal) && nullish(m.tool_calls) && nullish(m.function_call);
    case 'tool':
      return textContent(m.content) && str(m.tool_call_id);
    default:
      return false;
  }
}

export function isPlainValidChat(body: Obj): boolean {
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0 || model.length > MAX_MODEL_NAME_LENGTH) return false;
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return false;
  for (const m of messages) if (!message(m)) return false;
  for (const k in body) {
    if (k === 'model' || k === 'messages') continue;
    if (k === '__proto__') return false;
    const v = body[k];
    const check = PARAMS.get(k);
    if (check !== undefined) {
      if (!nullish(v) && !check(v)) return false;
    } else if (SCHEMA_ONLY.has(k) && !nullish(v)) return false;
  }
  return true;
}
