/**
 * The carriers of provider data through protocols that have no field for it (core/frontends/opaque.ts):
 * a Gemini thought signature rendered by each front end comes back, parsed, on the same tool call; a
 * client's own ids and values pass untouched. The SDK round trips are in
 * test/integration/gemini-thought-signatures.test.ts; this pins the encodings.
 */
import { describe, expect, it } from 'vitest';
import { decodeToolId, encodeToolId } from '../../core/frontends/opaque.ts';
import { ChatChunkWriter, renderChatCompletion } from '../../core/frontends/openai-chat/render.ts';
import { parseChatRequest } from '../../core/frontends/openai-chat/parse.ts';
import type { CallResult, OpaqueData } from '../../core/pipeline/call-model.ts';
import type { ChatRequest } from '../../core/providers/types.ts';

const SIG: OpaqueData = { origin: 'gemini', value: 'CiQBjz1rX+/abc==' };

describe('tool ids carrying opaque data (Anthropic Messages)', () => {
  it('round-trips, stays in the tool_use id alphabet, and leaves plain ids alone', () => {
    const id = encodeToolId('call_abc123', SIG);
    expect(id).toMatch(/^toolu_gw1_[A-Za-z0-9_-]+$/);
    expect(decodeToolId(id)).toEqual({ id: 'call_abc123', opaque: SIG });
    expect(encodeToolId('toolu_01A', undefined)).toBe('toolu_01A');
    expect(decodeToolId('toolu_01A')).toEqual({ id: 'toolu_01A' });
    expect(decodeToolId('toolu_gw1_not-base64-json')).toEqual({ id: 'toolu_gw1_not-base64-json' });
  });
});

describe('chat completions: extra_content.google.thought_signature', () => {
  it('rendered on the tool call (JSON and chunks) and parsed back onto it', () => {
    const result: CallResult = {
      id: 'x',
      model: 'gemini-3-pro-preview',
      created: 1,
      usage: null,
      choices: [{ content: [{ type: 'tool-call', id: 'call_1', name: 'f', arguments: '{}', kind: 'function', opaque: SIG }], finish: { unified: 'tool-calls', raw: 'STOP' } }],
    };
    const body = JSON.parse(renderChatCompletion(result, { requestId: 'r', requestedModel: 'g', model: 'g', provider: 'p' }, { usage: null, costUsd: null, estimated: false })) as {
      choices: Array<{ message: { tool_calls: Array<Record<string, unknown>> } }>;
    };
    expect(body.choices[0].message.tool_calls[0].extra_content).toEqual({ google: { thought_signature: SIG.value } });
    const chunk = new ChatChunkWriter('g').event({ type: 'tool-call-start', choice: 0, index: 0, id: 'call_1', name: 'f', kind: 'function', opaque: SIG });
    expect(chunk).toContain('"extra_content":{"google":{"thought_signature":"CiQBjz1rX+/abc=="}}');
    const req = parseChatRequest(
      { model: 'g', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: body.choices[0].message.tool_calls }, { role: 'tool', tool_call_id: 'call_1', content: 'r' }] } as unknown as ChatRequest,
      {},
    );
    expect(req.messages[1].content[0]).toMatchObject({ type: 'tool-call', id: 'call_1', opaque: SIG });
  });
});
