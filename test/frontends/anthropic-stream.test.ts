/**
 * The Anthropic stream renderer on its own: neutral events in, Anthropic's named events out, parsed
 * back by the official SDK's accumulator rules (sequential blocks, one start/stop per index).
 */
import { describe, expect, it } from 'vitest';
import { AnthropicStreamRenderer } from '../../core/frontends/anthropic-messages/stream.ts';
import type { CallEvent } from '../../core/pipeline/call-model.ts';

const meta = { requestId: 'r1', requestedModel: 'gpt-4o-mini', model: 'gpt-4o-mini', provider: 'oai' };
const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 4, cacheWriteTokens: 0, reasoningTokens: 0, estimated: false };

function render(events: CallEvent[]): Array<{ event: string; data: Record<string, unknown> }> {
  const r = new AnthropicStreamRenderer(meta);
  let text = '';
  for (const e of events) text += r.event(e);
  text += r.end({ usage, costUsd: 0.001, estimated: false });
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [ev, data] = frame.split('\n');
      return { event: ev.slice('event: '.length), data: JSON.parse(data.slice('data: '.length)) as Record<string, unknown> };
    });
}

/** What the SDK's accumulator requires: each block starts, gets deltas, stops, before the next index. */
function checkSequential(frames: ReturnType<typeof render>): void {
  let open: number | null = null;
  let next = 0;
  for (const f of frames) {
    const index = f.data.index as number | undefined;
    if (f.event === 'content_block_start') {
      expect(open).toBeNull();
      expect(index).toBe(next);
      open = index as number;
    } else if (f.event === 'content_block_delta') expect(index).toBe(open);
    else if (f.event === 'content_block_stop') {
      expect(index).toBe(open);
      open = null;
      next++;
    }
  }
  expect(open).toBeNull();
}

describe('AnthropicStreamRenderer', () => {
  it('parallel tool calls whose fragments interleave: the first streams live, the others follow whole, in order', () => {
    const frames = render([
      { type: 'start', id: 'chatcmpl-1', model: 'gpt-4o-mini' },
      { type: 'text-delta', choice: 0, text: 'Checking.' },
      { type: 'block-end', choice: 0 },
      { type: 'tool-call-start', choice: 0, index: 0, id: 'call_a', name: 'weather', kind: 'function' },
      { type: 'tool-call-delta', choice: 0, index: 0, argumentsDelta: '{"city":' },
      { type: 'tool-call-start', choice: 0, index: 1, id: 'call_b', name: 'time', kind: 'function' },
      { type: 'tool-call-delta', choice: 0, index: 1, argumentsDelta: '{"tz":"CET"}' },
      { type: 'tool-call-delta', choice: 0, index: 0, argumentsDelta: '"Paris"}' },
      { type: 'finish', choice: 0, reason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ]);
    checkSequential(frames);
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    const input = (i: number) => frames.filter((f) => f.event === 'content_block_delta' && f.data.index === i).map((f) => (f.data.delta as { partial_json: string }).partial_json).join('');
    expect(JSON.parse(input(1))).toEqual({ city: 'Paris' });
    expect(JSON.parse(input(2))).toEqual({ tz: 'CET' });
    expect(frames[8].data.content_block).toEqual({ type: 'tool_use', id: 'call_b', name: 'time', input: {} });
    const end = frames.at(-2)!.data;
    expect(end.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
    // Anthropic's semantics: input_tokens excludes cache reads; the call's cost rides along, as in chat's usage chunk.
    expect(end.usage).toEqual({ input_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 5, cost: 0.001 });
  });

  it("another provider's reasoning becomes a thinking block with the gateway's mark; its opaque data is never passed off as a signature", () => {
    const frames = render([
      { type: 'start', id: 'x', model: 'm' },
      { type: 'reasoning-delta', choice: 0, text: 'hmm' },
      { type: 'reasoning-opaque', choice: 0, opaque: { origin: 'openai', value: 'enc-xyz' } },
      { type: 'text-delta', choice: 0, text: 'Hi' },
      { type: 'finish', choice: 0, reason: { unified: 'stop', raw: 'stop' } },
    ]);
    checkSequential(frames);
    expect(frames[1].data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    const sigs = frames.filter((f) => (f.data.delta as { type?: string } | undefined)?.type === 'signature_delta').map((f) => (f.data.delta as { signature: string }).signature);
    expect(sigs).toEqual(['gw1:reasoning']);
    expect(JSON.stringify(frames)).not.toContain('enc-xyz');
    expect(frames.at(-2)!.data.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
  });

  it("Anthropic's own signature and redacted thinking go through as they came", () => {
    const frames = render([
      { type: 'start', id: 'msg_1', model: 'claude' },
      { type: 'reasoning-delta', choice: 0, text: 'plan' },
      { type: 'reasoning-opaque', choice: 0, opaque: { origin: 'anthropic', value: 'SIG==' } },
      { type: 'block-end', choice: 0 },
      { type: 'reasoning-opaque', choice: 0, opaque: { origin: 'anthropic', value: 'REDACTED' }, redacted: true },
      { type: 'text-delta', choice: 0, text: 'ok' },
      { type: 'finish', choice: 0, reason: { unified: 'length', raw: 'max_tokens' } },
    ]);
    checkSequential(frames);
    expect(frames.find((f) => (f.data.delta as { type?: string } | undefined)?.type === 'signature_delta')?.data.delta).toEqual({ type: 'signature_delta', signature: 'SIG==' });
    expect(frames.find((f) => (f.data.content_block as { type?: string } | undefined)?.type === 'redacted_thinking')?.data.content_block).toEqual({ type: 'redacted_thinking', data: 'REDACTED' });
    expect((frames[0].data.message as { id: string }).id).toBe('msg_1');
    expect(frames.at(-2)!.data.delta).toEqual({ stop_reason: 'max_tokens', stop_sequence: null });
  });
});

describe('reasoning sent back by an Anthropic client', () => {
  const body = {
    model: 'm',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'deepseek thought', signature: 'gw1:reasoning' }, { type: 'tool_use', id: 'call_1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'r' }] },
    ],
  };
  const ctx = (type: 'openai' | 'openai-compatible') => ({
    provider: { name: 'p', type, preset: null, baseUrl: 'http://x/v1', models: null, priority: 1, keyEnv: null, keySource: 'none' as const, options: {}, seq: 1 },
    model: 'm',
    apiKey: null,
    stream: false,
  });

  it("goes to a DeepSeek-style upstream as reasoning_content, never to OpenAI's API, and never to Anthropic", async () => {
    const { parseMessagesRequest } = await import('../../core/frontends/anthropic-messages/parse.ts');
    const { openAIChatBodyFromCall } = await import('../../core/providers/openai/encode-call.ts');
    const { anthropicBodyFromCall } = await import('../../core/providers/anthropic/encode-call.ts');
    const { anthropicPassthroughRequest } = await import('../../core/providers/anthropic/passthrough.ts');
    const req = parseMessagesRequest(body, {});
    const compat = openAIChatBodyFromCall(req, ctx('openai-compatible')) as { messages: Array<Record<string, unknown>> };
    expect(compat.messages[1]).toMatchObject({ role: 'assistant', reasoning_content: 'deepseek thought' });
    const official = openAIChatBodyFromCall(req, ctx('openai')) as { messages: Array<Record<string, unknown>> };
    expect(official.messages[1]).not.toHaveProperty('reasoning_content');
    expect(JSON.stringify(anthropicBodyFromCall(req, 'claude', false))).not.toContain('thinking');
    const passthrough = JSON.parse(anthropicPassthroughRequest(body, {}, { ...ctx('openai-compatible'), provider: { ...ctx('openai-compatible').provider, type: 'anthropic', baseUrl: 'http://a' } }).body as string) as typeof body;
    expect(JSON.stringify(passthrough.messages[1])).not.toContain('thinking');
    expect(passthrough.messages[1].content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }]);
  });
});
