import { randomBytes } from 'node:crypto';
import { startFakeServer } from './fault.ts';
import type { Exchange, FakeOptions, FakeUpstream, ProviderSpec, SseEvent } from './fault.ts';
import { promptTokens, runScenario } from './scenario.ts';
import type { ScenarioFinish, ScenarioInput, ScenarioMessage, ScenarioReply } from './scenario.ts';

// A fake Anthropic Messages API: POST /v1/messages (JSON and named-event SSE), GET /v1/models[/{id}],
// shapes per reference/protocol.md §10.1. It is strict where the real API is (max_tokens required, roles
// alternate starting with user), so a gateway translation bug shows up as the 400 it would cause in production.

export function startAnthropicUpstream(options?: Partial<FakeOptions>): Promise<FakeUpstream> {
  return startFakeServer(anthropicSpec, options);
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const ERROR_MESSAGES: Record<string, string> = {
  authentication_error: 'invalid x-api-key',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit (fake).',
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string;
}

export function anthropicError(status: number, requestId: string, message?: string): AnthropicErrorBody {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message: message ?? ERROR_MESSAGES[type] ?? `Fake upstream error ${status}` }, request_id: requestId };
}

const anthropicSpec: ProviderSpec = {
  basePath: '',
  defaultModels: ['claude-sonnet-4-6', 'claude-haiku-4-5', 'claude-opus-4-7'],
  requestIdHeader: 'request-id',
  errorReply: (status, requestId) => ({
    body: anthropicError(status, requestId),
    headers: status === 429 ? { 'retry-after': '1' } : undefined,
  }),
  handle: async (x) => {
    const fail = (status: number, message?: string) => x.json(status, anthropicError(status, x.requestId, message));
    const key = x.options.requireKey;
    if (key !== undefined && x.headers['x-api-key'] !== key && x.headers.authorization !== `Bearer ${key}`) {
      return fail(401);
    }
    if (x.method === 'POST' && x.path === '/v1/messages') return messages(x, fail);
    if (x.method === 'POST' && x.path === '/v1/messages/count_tokens') {
      const body = x.body as MessagesBody;
      if (typeof body?.model !== 'string' || !Array.isArray(body.messages)) return fail(400, 'model, messages: Field required');
      return x.json(200, { input_tokens: promptTokens(toScenario({ ...body, max_tokens: 1 })) });
    }
    if (x.method === 'GET' && x.path === '/v1/models') {
      const data = x.options.models.map(modelObject);
      return x.json(200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
    }
    if (x.method === 'GET' && x.path.startsWith('/v1/models/')) {
      const id = decodeURIComponent(x.path.slice('/v1/models/'.length));
      return x.options.models.includes(id) ? x.json(200, modelObject(id)) : fail(404, `model: ${id}`);
    }
    return fail(404, 'Not Found');
  },
};

function modelObject(id: string) {
  return { type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' };
}

// ---- request → scenario ----

interface Block {
  type?: string;
  text?: string;
  name?: string;
  input?: unknown;
  content?: string | Block[];
}
interface MessageParam {
  role?: unknown;
  content?: string | Block[];
}
interface MessagesBody {
  model?: unknown;
  max_tokens?: unknown;
  messages?: unknown;
  system?: string | Block[];
  tools?: { name?: string; type?: string }[];
  stream?: boolean;
}

function blocksText(content: string | Block[] | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join(' ');
}

function toMessage(m: MessageParam): ScenarioMessage {
  const blocks = Array.isArray(m.content) ? m.content : [];
  const results = blocks.filter((b) => b.type === 'tool_result');
  if (m.role === 'user' && results.length > 0) {
    return { role: 'tool', text: results.map((b) => blocksText(b.content)).join(' ') };
  }
  const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => `${b.name ?? ''} ${JSON.stringify(b.input ?? {})}`);
  const role = m.role === 'assistant' ? 'assistant' : 'user';
  return { role, text: [blocksText(m.content), ...calls].filter(Boolean).join(' ') };
}

export function toScenario(body: MessagesBody): ScenarioInput {
  const system = body.system === undefined ? undefined : blocksText(body.system);
  return {
    system,
    messages: (body.messages as MessageParam[]).map(toMessage),
    // Server tools (web_search, ...) carry a versioned `type`; only client tools can be called here.
    toolNames: (body.tools ?? []).flatMap((t) => (t.name && (t.type === undefined || t.type === 'custom') ? [t.name] : [])),
    // No native JSON mode: a system prompt that asks for JSON is how clients get it.
    json: system !== undefined && /\bjson\b/i.test(system),
    maxTokens: body.max_tokens as number,
  };
}

function validate(body: MessagesBody): string | null {
  if (typeof body !== 'object' || body === null) return 'The request body is not valid JSON.';
  if (typeof body.model !== 'string') return 'model: Field required';
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (typeof body.max_tokens !== 'number' || body.max_tokens < 1) return 'max_tokens: Input should be a positive integer';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  const roles = (body.messages as MessageParam[]).map((m) => m.role);
  const bad = roles.find((r) => r !== 'user' && r !== 'assistant');
  if (bad !== undefined) return `messages: Unexpected role ${JSON.stringify(bad)}. Allowed roles are "user" or "assistant".`;
  if (roles[0] !== 'user') return 'messages: first message must use the "user" role';
  for (let i = 1; i < roles.length; i++) {
    if (roles[i] === roles[i - 1]) {
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${roles[i]}" roles in a row`;
    }
  }
  return null;
}

/** Like the real API: a thinking block sent back must carry the exact signature this server issued. */
function forgedThinking(body: MessagesBody, issued: string | undefined): string | null {
  const messages = body.messages as MessageParam[];
  for (let i = 0; i < messages.length; i++) {
    const content = messages[i].content;
    if (!Array.isArray(content)) continue;
    for (let j = 0; j < content.length; j++) {
      const b = content[j] as Block & { signature?: unknown };
      if (b.type === 'thinking' && (issued === undefined || b.signature !== issued)) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return null;
}

/**
 * Like the real API: with thinking on, a tool loop's last assistant turn must hand back its thinking block
 * first (docs: extended thinking with tool use; the 400's wording is the API's).
 */
function thinkingToolTurn(body: MessagesBody): string | null {
  if ((body as { thinking?: { type?: string } }).thinking?.type !== 'enabled') return null;
  const messages = body.messages as MessageParam[];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== 'assistant') continue;
    const content = messages[i].content;
    if (!Array.isArray(content) || !content.some((b) => (b as Block).type === 'tool_use')) return null;
    const first = (content[0] as Block).type;
    if (first === 'thinking' || first === 'redacted_thinking') return null;
    return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
  }
  return null;
}

// ---- response ----

const STOP_REASONS: Record<ScenarioFinish, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' };

/** input_tokens excludes cache reads and writes; thinking (the reasoning knob) counts as output. */
export function anthropicUsage(reply: ScenarioReply, options: FakeOptions) {
  const write = options.cacheWriteTokens ?? 0;
  return {
    input_tokens: reply.promptTokens,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: options.cachedTokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: write, ephemeral_1h_input_tokens: 0 },
    output_tokens: reply.completionTokens + (options.reasoningTokens ?? 0),
    service_tier: 'standard',
  };
}

async function messages(x: Exchange, fail: (status: number, message?: string) => Promise<void>): Promise<void> {
  const body = x.body as MessagesBody;
  const problem = validate(body) ?? forgedThinking(body, x.options.thinking?.signature) ?? thinkingToolTurn(body);
  if (problem) return fail(400, problem);
  const reply = runScenario({ ...toScenario(body), forcedTool: x.options.toolCall });
  const thinking = x.options.thinking;
  const id = `msg_${randomBytes(12).toString('hex')}`;
  const toolId = `toolu_${randomBytes(12).toString('hex')}`;
  const usage = x.options.omitUsage ? undefined : anthropicUsage(reply, x.options);
  if (body.stream === true) return x.sse(streamEvents(body.model as string, id, toolId, reply, usage, thinking));

  const content: object[] = reply.toolCall
    ? [{ type: 'tool_use', id: toolId, name: reply.toolCall.name, input: reply.toolCall.arguments }]
    : [{ type: 'text', text: reply.text }];
  if (thinking) content.unshift({ type: 'thinking', thinking: thinking.text, signature: thinking.signature });
  return x.json(200, {
    id,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: STOP_REASONS[reply.finish],
    stop_sequence: null,
    ...(usage ? { usage } : {}),
  });
}

function streamEvents(
  model: string,
  id: string,
  toolId: string,
  reply: ScenarioReply,
  usage: ReturnType<typeof anthropicUsage> | undefined,
  thinking?: { text: string; signature: string },
): SseEvent[] {
  const ev = (type: string, payload: object = {}): SseEvent => ({ event: type, data: JSON.stringify({ type, ...payload }) });
  const startUsage = usage && { ...usage, output_tokens: 1 };
  const events: SseEvent[] = [
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        ...(startUsage ? { usage: startUsage } : {}),
      },
    }),
  ];
  // A signed thinking block first, as Claude models with thinking on answer; the blocks after it shift by one.
  const at = thinking ? 1 : 0;
  if (thinking) {
    events.push(ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    events.push(ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: thinking.text } }));
    events.push(ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: thinking.signature } }));
    events.push(ev('content_block_stop', { index: 0 }));
  }
  const call = reply.toolCall;
  if (call) {
    events.push(ev('content_block_start', { index: at, content_block: { type: 'tool_use', id: toolId, name: call.name, input: {} } }));
    events.push(ev('ping'));
    for (const fragment of call.argumentFragments) {
      events.push(ev('content_block_delta', { index: at, delta: { type: 'input_json_delta', partial_json: fragment } }));
    }
  } else {
    events.push(ev('content_block_start', { index: at, content_block: { type: 'text', text: '' } }));
    events.push(ev('ping'));
    for (const piece of reply.pieces) {
      events.push(ev('content_block_delta', { index: at, delta: { type: 'text_delta', text: piece } }));
    }
  }
  events.push(ev('content_block_stop', { index: at }));
  events.push(
    ev('message_delta', {
      delta: { stop_reason: STOP_REASONS[reply.finish], stop_sequence: null },
      // Cumulative, not an increment.
      ...(usage ? { usage: { output_tokens: usage.output_tokens } } : {}),
    }),
  );
  events.push(ev('message_stop'));
  return events;
}
