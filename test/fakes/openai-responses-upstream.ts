import { randomBytes } from 'node:crypto';
import { startFakeServer } from './fault.ts';
import type { Exchange, FakeOptions, FakeUpstream, ProviderSpec, SseEvent } from './fault.ts';
import { openaiError, openaiErrorFor } from './openai-upstream.ts';
import { countWords, runScenario, splitWords } from './scenario.ts';
import type { ScenarioInput, ScenarioMessage, ScenarioReply } from './scenario.ts';

// A fake OpenAI upstream speaking the Responses API (POST /v1/responses, GET /v1/models), in the shapes
// of reference/inbound-protocols.md C.3/C.4 and openai-python's response types: the whole stream event
// sequence with `event:` names and increasing `sequence_number`, usage with both details objects, a
// reasoning item (with encrypted_content when `include` asks) when the reasoning knob is set. The reply
// comes from the shared scenario unless `script` decides (agent tests steer which tool is called).

export interface ScriptedCall {
  name: string;
  /** `function` tools get `arguments` (JSON text); `custom` tools get `input` (raw text). */
  kind: 'function' | 'custom';
  payload: string;
}

/** Decides a reply from the request body; return null to fall back to the scenario. */
export type ResponsesScript = (body: ResponsesBody) => { text: string } | { call: ScriptedCall } | null;

export interface ResponsesBody {
  model?: unknown;
  input?: unknown;
  instructions?: unknown;
  tools?: Array<{ type?: string; name?: string }>;
  stream?: boolean;
  max_output_tokens?: number | null;
  include?: string[];
  text?: { format?: { type?: string } };
}

interface InputItem {
  type?: string;
  role?: string;
  content?: unknown;
  output?: unknown;
  name?: string;
  arguments?: string;
  input?: string;
}

export function startOpenAIResponsesUpstream(options?: Partial<FakeOptions>, script?: ResponsesScript): Promise<FakeUpstream> {
  const spec: ProviderSpec = {
    basePath: '/v1',
    defaultModels: ['gpt-5-codex', 'gpt-4o-mini'],
    requestIdHeader: 'x-request-id',
    errorReply: (status) => openaiErrorFor(status),
    handle: async (x) => {
      if (x.options.requireKey !== undefined && x.headers.authorization !== `Bearer ${x.options.requireKey}`) return x.json(401, openaiErrorFor(401).body);
      if (x.method === 'POST' && x.path === '/v1/responses') return responses(x, script);
      if (x.method === 'GET' && x.path === '/v1/models') {
        return x.json(200, { object: 'list', data: x.options.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake-openai' })) });
      }
      return x.json(404, openaiError(`Invalid URL (${x.method} ${x.path})`, 'invalid_request_error'));
    },
  };
  return startFakeServer(spec, options);
}

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Array<{ type?: string; text?: string }>)
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text)
    .join(' ');
}

export function toScenario(body: ResponsesBody): ScenarioInput {
  const system: string[] = [];
  if (typeof body.instructions === 'string') system.push(body.instructions);
  const turns: ScenarioMessage[] = [];
  const items: InputItem[] = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : ((body.input as InputItem[]) ?? []);
  for (const it of items) {
    const type = it.type ?? 'message';
    if (type === 'message') {
      const text = partsText(it.content);
      if (it.role === 'system' || it.role === 'developer') system.push(text);
      else turns.push({ role: it.role === 'assistant' ? 'assistant' : 'user', text });
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      turns.push({ role: 'assistant', text: `${it.name ?? ''} ${it.arguments ?? it.input ?? ''}` });
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      turns.push({ role: 'tool', text: partsText(it.output) });
    }
  }
  const format = body.text?.format?.type;
  return {
    system: system.length > 0 ? system.join('\n') : undefined,
    messages: turns,
    toolNames: (body.tools ?? []).flatMap((t) => (t.name && (t.type === 'function' || t.type === 'custom') ? [t.name] : [])),
    json: format === 'json_object' || format === 'json_schema',
    maxTokens: body.max_output_tokens ?? undefined,
  };
}

type Item = Record<string, unknown> & { id: string; type: string };

const hex = () => randomBytes(12).toString('hex');

function usageOf(reply: ScenarioReply, options: FakeOptions) {
  const cached = options.cachedTokens ?? 0;
  const reasoning = options.reasoningTokens ?? 0;
  const input = reply.promptTokens + cached;
  const output = reply.completionTokens + reasoning;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
}

async function responses(x: Exchange, script: ResponsesScript | undefined): Promise<void> {
  const body = x.body as ResponsesBody;
  if (typeof body !== 'object' || body === null || typeof body.model !== 'string') {
    return x.json(400, openaiError('Missing required parameter: model.', 'invalid_request_error', 'model', 'missing_required_parameter'));
  }
  if (body.input === undefined) return x.json(400, openaiError("Missing required parameter: 'input'.", 'invalid_request_error', 'input', 'missing_required_parameter'));
  const scenario = toScenario(body);
  const reply = runScenario(scenario);
  const scripted = script?.(body) ?? null;
  const kinds = new Map((body.tools ?? []).map((t) => [t.name, t.type]));

  // The answer as output items (final form).
  const output: Item[] = [];
  const reasoningTokens = x.options.reasoningTokens ?? 0;
  if (reasoningTokens > 0) {
    output.push({
      id: `rs_${hex()}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: '**Thinking it over**' }],
      ...(body.include?.includes('reasoning.encrypted_content') ? { encrypted_content: `gAAAAB${hex()}` } : {}),
    });
  }
  let text: string | null = null;
  let call: ScriptedCall | null = null;
  if (scripted && 'call' in scripted) call = scripted.call;
  else if (scripted) text = scripted.text;
  else if (reply.toolCall) {
    const kind = kinds.get(reply.toolCall.name) === 'custom' ? 'custom' : 'function';
    call = { name: reply.toolCall.name, kind, payload: reply.toolCall.argumentsJson };
  } else text = reply.text;
  if (call) {
    const callId = `call_${hex()}`;
    output.push(
      call.kind === 'function'
        ? { id: `fc_${hex()}`, type: 'function_call', status: 'completed', call_id: callId, name: call.name, arguments: call.payload }
        : { id: `ctc_${hex()}`, type: 'custom_tool_call', status: 'completed', call_id: callId, name: call.name, input: call.payload },
    );
  } else {
    output.push({ id: `msg_${hex()}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: text ?? '', annotations: [], logprobs: [] }] });
  }
  const completionTokens = call ? countWords(`${call.name} ${call.payload}`) : countWords(text ?? '');
  const counted: ScenarioReply = { ...reply, completionTokens: scripted ? completionTokens : reply.completionTokens };
  const incomplete = !scripted && reply.finish === 'length';
  const response = {
    id: `resp_${hex()}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: x.options.omitUsage ? null : usageOf(counted, x.options),
    user: null,
    metadata: {},
  };
  if (body.stream !== true) return x.json(200, response);
  return x.sse(streamEvents(response, output));
}

/** The event sequence of C.4 for a finished response. */
function streamEvents(response: Record<string, unknown>, output: Item[]): SseEvent[] {
  let seq = 0;
  const events: SseEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>) => events.push({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...fields }) });
  const shell = { ...response, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  emit('response.created', { response: shell });
  emit('response.in_progress', { response: shell });
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      const text = (item.content as Array<{ text: string }>)[0].text;
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const base = { item_id: item.id, output_index, content_index: 0 };
      emit('response.content_part.added', { ...base, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
      for (const delta of splitWords(text)) emit('response.output_text.delta', { ...base, delta, logprobs: [] });
      emit('response.output_text.done', { ...base, text, logprobs: [] });
      emit('response.content_part.done', { ...base, part: { type: 'output_text', text, annotations: [], logprobs: [] } });
    } else if (item.type === 'reasoning') {
      const text = (item.summary as Array<{ text: string }>)[0].text;
      emit('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      const base = { item_id: item.id, output_index, summary_index: 0 };
      emit('response.reasoning_summary_part.added', { ...base, part: { type: 'summary_text', text: '' } });
      emit('response.reasoning_summary_text.delta', { ...base, delta: text });
      emit('response.reasoning_summary_text.done', { ...base, text });
      emit('response.reasoning_summary_part.done', { ...base, part: { type: 'summary_text', text } });
    } else if (item.type === 'function_call') {
      const args = item.arguments as string;
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      const third = Math.ceil(args.length / 3);
      for (let i = 0; i < args.length; i += third) emit('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: args.slice(i, i + third) });
      emit('response.function_call_arguments.done', { item_id: item.id, output_index, name: item.name, arguments: args });
    } else if (item.type === 'custom_tool_call') {
      const input = item.input as string;
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', input: '' } });
      emit('response.custom_tool_call_input.delta', { item_id: item.id, output_index, delta: input });
      emit('response.custom_tool_call_input.done', { item_id: item.id, output_index, input });
    }
    emit('response.output_item.done', { output_index, item });
  });
  emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return events;
}
