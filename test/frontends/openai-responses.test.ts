/**
 * The Responses front end as pure functions: a Codex-shaped request parsed into the neutral model, bad
 * requests refused with the field named, and neutral events rendered into the stream that the official
 * `openai` SDK's strict accumulator (`ResponseStream.fromReadableStream`) turns into a final Response.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { describe, expect, it } from 'vitest';
import { GatewayError, upstreamError } from '../../core/errors.ts';
import { bridgeLimits, responsesFrontEnd, responsesFrontEndFor } from '../../core/frontends/openai-responses/index.ts';
import { decodeOpaque, encodeOpaque } from '../../core/frontends/opaque.ts';
import type { CallEvent, CallRequest } from '../../core/pipeline/call-model.ts';
import type { Usage } from '../../core/usage.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/codex', name), 'utf8')) as Record<string, unknown>;

const parse = (body: Record<string, unknown>): CallRequest => responsesFrontEnd.parse(body, {});

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    parse(body);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const usage: Usage = { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, cacheWriteTokens: 0, reasoningTokens: 12, estimated: false };
const meta = { requestId: 'req_0123456789abcdef01234567', requestedModel: 'm', model: 'm', provider: 'p' };

/** Renders events, checks the SSE framing and sequence numbers, and lets the SDK accumulate the result. */
async function renderAndAccumulate(req: CallRequest, events: CallEvent[], finish: 'end' | GatewayError = 'end') {
  const r = responsesFrontEnd.stream(req, meta);
  let text = events.map((e) => r.event(e)).join('');
  text += finish === 'end' ? r.end({ usage, costUsd: 0.0012, estimated: false }) : r.error(finish);
  const blocks = text.split('\n\n').filter(Boolean);
  const parsed = blocks.map((b) => {
    const [ev, data] = b.split('\n');
    expect(ev.startsWith('event: ')).toBe(true);
    const j = JSON.parse(data.slice('data: '.length)) as { type: string; sequence_number: number };
    expect(ev.slice('event: '.length)).toBe(j.type);
    return j;
  });
  parsed.forEach((j, i) => expect(j.sequence_number).toBe(i));
  const lines = parsed.map((j) => JSON.stringify(j)).join('\n');
  const stream = ResponseStream.fromReadableStream(new Blob([lines]).stream());
  return { events: parsed, final: finish === 'end' ? await stream.finalResponse() : null, stream };
}

describe('parse', () => {
  it('reads a recorded Codex request (instructions, developer messages, tools, reasoning settings)', () => {
    const body = fixture('native-2.json');
    const req = parse(body);
    expect(req).toMatchObject({ inbound: 'openai-responses', model: 'gpt-5-codex', stream: true, n: 1, parallelToolCalls: true, toolChoice: { type: 'auto' } });
    expect(req.system.length).toBeGreaterThanOrEqual(2); // instructions/developer messages
    expect(req.tools.map((t) => t.name)).toContain('exec_command');
    // Built-in and namespace tools are not neutral tools.
    expect(req.tools.every((t) => t.kind === 'function' || t.kind === 'custom')).toBe(true);
    expect(req.extra).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    const assistant = req.messages.find((m) => m.role === 'assistant');
    expect(assistant?.content.some((p) => p.type === 'tool-call' && p.name === 'exec_command')).toBe(true);
    const tool = req.messages.find((m) => m.role === 'tool');
    expect(tool?.content[0]).toMatchObject({ type: 'tool-result', kind: 'function' });
    expect(req.raw).toBe(body);
    expect(bridgeLimits(body).droppedTools).toEqual(expect.arrayContaining(['web_search', 'namespace']));
  });

  it('turns history items into turns: reasoning, calls (function and custom) in one assistant turn, outputs in one tool turn', () => {
    const req = parse({
      model: 'x',
      instructions: 'be nice',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'policy' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'thinking' }], encrypted_content: encodeOpaque({ origin: 'anthropic', value: 'sig-abc' }) },
        { type: 'reasoning', summary: [], encrypted_content: 'gAAAAB-openai' },
        { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"cmd":"ls"}' },
        { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'function_call_output', call_id: 'c1', output: 'a\nb' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'ok' }] },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      ],
      tools: [
        { type: 'function', name: 'shell', parameters: { type: 'object' }, strict: false },
        { type: 'custom', name: 'apply_patch', description: 'patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } },
        { type: 'web_search' },
      ],
      tool_choice: { type: 'function', name: 'shell' },
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      max_output_tokens: 500,
    });
    expect(req.system.map((p) => p.text)).toEqual(['be nice', 'policy']);
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(req.messages[0].content[1]).toEqual({ type: 'image', source: { kind: 'url', url: 'data:image/png;base64,AAAA' }, detail: 'low' });
    const [r1, r2, fc, cc] = req.messages[1].content;
    expect(r1).toEqual({ type: 'reasoning', text: 'thinking', opaque: { origin: 'anthropic', value: 'sig-abc' }, itemId: 'rs_1' });
    expect(r2).toMatchObject({ type: 'reasoning', opaque: { origin: 'openai', value: 'gAAAAB-openai' } });
    expect(fc).toEqual({ type: 'tool-call', id: 'c1', name: 'shell', arguments: '{"cmd":"ls"}', kind: 'function' });
    expect(cc).toEqual({ type: 'tool-call', id: 'c2', name: 'apply_patch', arguments: '*** Begin Patch', kind: 'custom' });
    expect(req.messages[2].content).toEqual([
      { type: 'tool-result', callId: 'c1', content: 'a\nb', kind: 'function' },
      { type: 'tool-result', callId: 'c2', content: [{ type: 'text', text: 'ok' }], kind: 'custom' },
    ]);
    expect(req.tools).toEqual([
      { kind: 'function', name: 'shell', parameters: { type: 'object' }, strict: false },
      { kind: 'custom', name: 'apply_patch', description: 'patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } },
    ]);
    expect(req.toolChoice).toEqual({ type: 'tool', name: 'shell' });
    expect(req.reasoning).toEqual({ effort: 'high', summary: 'auto' });
    expect(req.responseFormat).toEqual({ type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true });
    expect(req.maxOutputTokens).toBe(500);
  });

  it('a string input is one user message', () => {
    expect(parse({ model: 'x', input: 'hi' }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('refuses bad requests with the field named', () => {
    expect(refusal({ input: 'hi' })).toMatchObject({ status: 400, param: 'model' });
    expect(refusal({ model: 'x' })).toMatchObject({ status: 400, param: 'input' });
    expect(refusal({ model: 'x', input: 'hi', max_output_tokens: 'lots' })).toMatchObject({ status: 400, param: 'max_output_tokens', code: 'invalid_type' });
    expect(refusal({ model: 'x', input: [{ type: 'function_call', name: 'f' }] })).toMatchObject({ status: 400 });
  });

  it('bridgeLimits: previous_response_id and forced built-in tools are refused', () => {
    expect(() => bridgeLimits({ previous_response_id: 'resp_1' })).toThrow(/previous_response_id/);
    expect(() => bridgeLimits({ input: [{ type: 'message', role: 'user', content: 'x' }, { type: 'item_reference', id: 'msg_1' }] })).toThrow(/input\[1\]/);
    // An item type the gateway does not know is for a native upstream only (parse leaves it in the raw body).
    expect(parse({ model: 'x', input: [{ type: 'telepathy' }, { type: 'message', role: 'user', content: 'hi' }] }).messages).toHaveLength(1);
    expect(() => bridgeLimits({ input: [{ type: 'telepathy' }] })).toThrow(/input\[0\]\.type.*telepathy/);
    expect(() => bridgeLimits({ tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } })).toThrow(/tool_choice/);
    expect(bridgeLimits({ tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] }).droppedTools).toEqual(['web_search']);
  });
});

describe('opaque reasoning', () => {
  it('OpenAI values pass unchanged; others are wrapped under gw1: with their origin', () => {
    expect(encodeOpaque({ origin: 'openai', value: 'gAAA' })).toBe('gAAA');
    const wrapped = encodeOpaque({ origin: 'anthropic', value: 'EqQBCkYIBxgC' });
    expect(wrapped.startsWith('gw1:')).toBe(true);
    expect(decodeOpaque(wrapped)).toEqual({ origin: 'anthropic', value: 'EqQBCkYIBxgC' });
    expect(decodeOpaque('gw1:not-base64-json')).toEqual({ origin: 'openai', value: 'gw1:not-base64-json' });
  });
});

describe('stream renderer', () => {
  const req = parse({
    model: 'm',
    input: 'go',
    tools: [
      { type: 'function', name: 'shell', parameters: { type: 'object' } },
      { type: 'custom', name: 'apply_patch' },
    ],
  });

  it('reasoning, text and interleaved parallel tool calls become the sequence the SDK accepts', async () => {
    const { events, final } = await renderAndAccumulate(req, [
      { type: 'start', id: 'x', model: 'm' },
      { type: 'reasoning-delta', choice: 0, text: 'Let me ' },
      { type: 'reasoning-delta', choice: 0, text: 'think.' },
      { type: 'reasoning-opaque', choice: 0, opaque: { origin: 'anthropic', value: 'sig' } },
      { type: 'block-end', choice: 0 },
      { type: 'text-delta', choice: 0, text: 'Running ' },
      { type: 'text-delta', choice: 0, text: 'two tools.' },
      { type: 'block-end', choice: 0 },
      { type: 'tool-call-start', choice: 0, index: 0, id: 'call_a', name: 'shell', kind: 'function' },
      { type: 'tool-call-start', choice: 0, index: 1, id: 'call_b', name: 'shell', kind: 'function' },
      { type: 'tool-call-delta', choice: 0, index: 0, argumentsDelta: '{"cmd":' },
      { type: 'tool-call-delta', choice: 0, index: 1, argumentsDelta: '{"cmd":"pwd"}' },
      { type: 'tool-call-delta', choice: 0, index: 0, argumentsDelta: '"ls"}' },
      { type: 'tool-call-start', choice: 0, index: 2, id: 'call_c', name: 'apply_patch', kind: 'function' },
      { type: 'tool-call-delta', choice: 0, index: 2, argumentsDelta: '{"content":"*** Begin Patch\\n*** End Patch"}' },
      { type: 'finish', choice: 0, reason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ]);
    expect(events[0].type).toBe('response.created');
    expect(events[1].type).toBe('response.in_progress');
    expect(events.at(-1)!.type).toBe('response.completed');
    expect(final!.id).toBe('resp_0123456789abcdef01234567');
    expect(final!.status).toBe('completed');
    expect(final!.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call', 'custom_tool_call']);
    const [reasoning, , a, b, c] = final!.output as unknown as Array<Record<string, unknown>>;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'Let me think.' }]);
    expect(decodeOpaque(String(reasoning.encrypted_content))).toEqual({ origin: 'anthropic', value: 'sig' });
    expect(final!.output_text).toBe('Running two tools.');
    expect(a).toMatchObject({ call_id: 'call_a', arguments: '{"cmd":"ls"}', status: 'completed' });
    expect(b).toMatchObject({ call_id: 'call_b', arguments: '{"cmd":"pwd"}' });
    expect(c).toMatchObject({ call_id: 'call_c', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' });
    expect(final!.usage).toMatchObject({ input_tokens: 120, input_tokens_details: { cached_tokens: 100 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 150 });
    // Every item has its done event carrying the full item (Codex builds history from these).
    const done = events.filter((e) => e.type === 'response.output_item.done') as unknown as Array<{ item: { type: string } }>;
    expect(done.map((d) => d.item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call', 'custom_tool_call']);
  });

  it('a length finish ends with response.incomplete (max_output_tokens)', async () => {
    const r = responsesFrontEnd.stream(req, meta);
    const text = [r.event({ type: 'text-delta', choice: 0, text: 'cut' }), r.event({ type: 'finish', choice: 0, reason: { unified: 'length', raw: 'length' } }), r.end({ usage, costUsd: null, estimated: false })].join('');
    const last = JSON.parse(text.trim().split('\n').at(-1)!.slice(6)) as { type: string; response: { status: string; incomplete_details: unknown } };
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('an error after the first byte ends with response.failed, which the SDK reports as failed', async () => {
    const { events, stream } = await renderAndAccumulate(req, [{ type: 'text-delta', choice: 0, text: 'partial' }], upstreamError('provider went away', { attempts: 1 }));
    const last = events.at(-1) as unknown as { type: string; response: { status: string; error: { code: string; message: string } } };
    expect(last.type).toBe('response.failed');
    expect(last.response.error).toEqual({ code: 'server_error', message: 'provider went away' });
    const final = await stream.finalResponse();
    expect(final.status).toBe('failed');
    expect(final.error?.message).toBe('provider went away');
    // The cut message is never announced done (Codex would keep the fragment as an assistant turn).
    expect(events.some((e) => e.type === 'response.output_item.done')).toBe(false);
    expect(last.response).toMatchObject({ output: [] });
  });

  it('native mode relays frames as sent and ends a cut stream with the next sequence number', () => {
    const r = responsesFrontEnd.stream(req, meta);
    const created = JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_up', status: 'in_progress' } });
    const delta = JSON.stringify({ type: 'response.output_text.delta', sequence_number: 1, delta: 'x' });
    expect(r.raw!(created, 'response.created')).toBe(`event: response.created\ndata: ${created}\n\n`);
    r.raw!(delta, 'response.output_text.delta');
    expect(r.end({ usage, costUsd: null, estimated: false })).toBe('');
    const failed = r.error(upstreamError('cut', { attempts: 1 }));
    expect(JSON.parse(failed.split('data: ')[1])).toMatchObject({ type: 'response.failed', sequence_number: 2, response: { id: 'resp_up', status: 'failed' } });
  });

  it('native mode reads the sequence and id of JSON written with spaces too', () => {
    const r = responsesFrontEnd.stream(req, meta);
    r.raw!('{"type": "response.created", "sequence_number": 0, "response": {"id": "resp_sp", "status": "in_progress"}}', 'response.created');
    r.raw!('{"type": "response.output_text.delta", "sequence_number": 7, "delta": "x"}', 'response.output_text.delta');
    const failed = r.error(upstreamError('cut', { attempts: 1 }));
    expect(JSON.parse(failed.split('data: ')[1])).toMatchObject({ sequence_number: 8, response: { id: 'resp_sp' } });
  });
});

describe('non-stream render', () => {
  it('a Response object with output items, usage and cost', () => {
    const req = parse({ model: 'm', input: 'x', tools: [{ type: 'custom', name: 'apply_patch' }], instructions: 'sys' });
    const text = responsesFrontEndFor(req).render(
      {
        id: 'u',
        model: 'm',
        created: 1_700_000_000,
        usage: null,
        choices: [
          {
            content: [
              { type: 'reasoning', text: 'hmm' },
              { type: 'text', text: 'Hello' },
              { type: 'tool-call', id: 'call_1', name: 'apply_patch', arguments: '{"content":"patch text"}', kind: 'function' },
            ],
            finish: { unified: 'tool-calls', raw: 'tool_calls' },
          },
        ],
      },
      meta,
      { usage, costUsd: 0.5, estimated: false },
    );
    const r = JSON.parse(text) as Record<string, unknown>;
    expect(r).toMatchObject({ object: 'response', status: 'completed', created_at: 1_700_000_000, instructions: 'sys', usage: { total_tokens: 150, cost: 0.5 } });
    expect((r.output as Array<{ type: string }>).map((o) => o.type)).toEqual(['reasoning', 'message', 'custom_tool_call']);
    expect((r.output as Array<Record<string, unknown>>)[2]).toMatchObject({ call_id: 'call_1', input: 'patch text' });
  });

  it('errors render in the OpenAI envelope', () => {
    const e = responsesFrontEnd.error(upstreamError('all failed', { attempts: 2 }), 'req_1');
    expect(e.status).toBe(502);
    expect(JSON.parse(e.body)).toEqual({ error: { message: 'all failed', type: 'api_error', param: null, code: 'upstream_error' } });
    expect(e.headers['x-should-retry']).toBe('false');
  });
});
