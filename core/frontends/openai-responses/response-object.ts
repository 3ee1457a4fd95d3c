/**
 * The Response object (C.3) and its output items, shared by the non-stream answer and the lifecycle
 * events of a stream. `output_text` is not a wire field (the SDKs compute it).
 */
import type { CallRequest, ContentPart, FinishReason, OpaqueData } from '../../pipeline/call-model.ts';
import type { Usage } from '../../usage.ts';
import { unwrapCustom } from './custom-tools.ts';
import { mintId } from './ids.ts';
import { encodeOpaque } from '../opaque.ts';
import { toResponsesUsage } from './usage.ts';

export type OutputItem = Record<string, unknown> & { id: string; type: string };

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The response id of a call: the audit row's id, so `gateway logs show` finds it. */
export const responseIdFor = (requestId: string): string => `resp_${requestId.replace(/^req_/, '')}`;

export function messageItem(id: string, text: string, status: 'in_progress' | 'completed'): OutputItem {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

/**
 * A reasoning item's `encrypted_content`: the provider's own opaque data, wrapped; or, for reasoning a chat
 * upstream sent as text (DeepSeek's `reasoning_content`), the gateway's mark, so that when the client sends the
 * item back its text returns to the upstream as `reasoning_content`, which DeepSeek's thinking mode requires on
 * the turn after a tool call (Codex's second turn was a 400). A native upstream never sees a `gw1:` value.
 */
export function reasoningCarrier(opaque: OpaqueData | null | undefined, text: string): string | null {
  if (opaque) return encodeOpaque(opaque);
  return text !== '' ? GATEWAY_REASONING : null;
}

const GATEWAY_REASONING = encodeOpaque({ origin: 'gateway', value: 'reasoning' });

export function reasoningItem(id: string, text: string, encrypted: string | null): OutputItem {
  return {
    id,
    type: 'reasoning',
    summary: text === '' ? [] : [{ type: 'summary_text', text }],
    ...(encrypted !== null ? { encrypted_content: encrypted } : {}),
  };
}

/**
 * A tool call's opaque data (Gemini's thought signature) travels as a reasoning item of its own, just
 * before the call: Responses clients send reasoning items back with `encrypted_content` (Codex's
 * `store: false` history, `input.push(...response.output)`), and the parse moves it back onto the call.
 */
export function signatureItem(opaque: OpaqueData): OutputItem {
  return reasoningItem(mintId('rs'), '', encodeOpaque(opaque));
}

export function toolCallItem(id: string, kind: 'function' | 'custom', callId: string, name: string, args: string, status: 'in_progress' | 'completed'): OutputItem {
  return kind === 'function'
    ? { id, type: 'function_call', status, call_id: callId, name, arguments: args }
    : { id, type: 'custom_tool_call', status, call_id: callId, name, input: args };
}

/** The output items of a whole answer: consecutive text parts form one message; `custom` names the custom tools. */
export function outputItems(parts: ContentPart[], custom: Set<string> = new Set()): OutputItem[] {
  const items: OutputItem[] = [];
  let text: string | null = null;
  const flush = () => {
    if (text !== null) items.push(messageItem(mintId('msg'), text, 'completed'));
    text = null;
  };
  for (const p of parts) {
    if (p.type === 'text') {
      text = (text ?? '') + p.text;
      continue;
    }
    flush();
    if (p.type === 'reasoning') {
      items.push(reasoningItem(p.itemId ?? mintId('rs'), p.redacted ? '' : p.text, reasoningCarrier(p.opaque, p.text)));
    } else if (p.type === 'tool-call') {
      if (p.opaque) items.push(signatureItem(p.opaque));
      const wrapped = p.kind === 'function' && custom.has(p.name);
      const kind = wrapped ? 'custom' : p.kind;
      items.push(toolCallItem(mintId(kind === 'function' ? 'fc' : 'ctc'), kind, p.id, p.name, wrapped ? unwrapCustom(p.arguments) : p.arguments, 'completed'));
    }
  }
  flush();
  return items;
}

/** The terminal status of an answer that ended with this finish reason. */
export function terminalStatus(finish: FinishReason | null): { status: ResponseStatus; incomplete: { reason: string } | null } {
  if (finish?.unified === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finish?.unified === 'content-filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

export interface ResponseFields {
  id: string;
  createdAt: number;
  model: string;
  status: ResponseStatus;
  output: OutputItem[];
  usage: Usage | null;
  costUsd: number | null;
  incomplete: { reason: string } | null;
  error: { code: string; message: string } | null;
  /** The request, to echo its settings as OpenAI does; absent on a non-stream render. */
  req?: CallRequest;
}

export function responseObject(f: ResponseFields): Record<string, unknown> {
  const raw = f.req?.raw ?? {};
  const echo = (k: string, fallback: unknown): unknown => (raw[k] !== undefined && raw[k] !== null ? raw[k] : fallback);
  return {
    id: f.id,
    object: 'response',
    created_at: f.createdAt,
    status: f.status,
    background: false,
    error: f.error,
    incomplete_details: f.incomplete,
    instructions: echo('instructions', null),
    max_output_tokens: echo('max_output_tokens', null),
    model: f.model,
    output: f.output,
    parallel_tool_calls: echo('parallel_tool_calls', true),
    previous_response_id: null,
    reasoning: echo('reasoning', { effort: null, summary: null }),
    service_tier: echo('service_tier', 'default'),
    store: echo('store', false),
    temperature: echo('temperature', 1),
    text: echo('text', { format: { type: 'text' } }),
    tool_choice: echo('tool_choice', 'auto'),
    tools: echo('tools', []),
    top_p: echo('top_p', 1),
    truncation: echo('truncation', 'disabled'),
    usage: f.usage ? toResponsesUsage(f.usage, f.costUsd) : null,
    user: null,
    metadata: echo('metadata', {}),
  };
}
