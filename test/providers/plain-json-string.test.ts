import { describe, expect, it } from 'vitest';
import { AnthropicPassthroughDecoder } from '../../core/providers/anthropic/passthrough.ts';
import { decodeStringBody } from '../../core/providers/plain-json-string.ts';

const texts = ['', 'Hello', 'a "quoted" "text": word', 'tab\there\nnew', 'é 中文 🎉', 'back\\slash\\', '{"partial_json": 1}'];

describe('decodeStringBody', () => {
  it('decodes a literal as JSON.parse does, and declines what is not JSON', () => {
    for (const t of texts) expect(decodeStringBody(JSON.stringify(t).slice(1, -1))).toBe(t);
    expect(decodeStringBody('bad \\x escape')).toBeUndefined();
    expect(decodeStringBody('raw \u0001 control')).toBeUndefined();
  });
});

describe('the Anthropic pass-through reads delta text without a parse, as the parse would', () => {
  const parsedText = (data: string): string => {
    const d = (JSON.parse(data) as { delta?: { text?: unknown; partial_json?: unknown } }).delta;
    return typeof d?.text === 'string' ? d.text : typeof d?.partial_json === 'string' ? d.partial_json : '';
  };
  it('text and tool-input deltas, with any text; other shapes through the parse', () => {
    const events: string[] = [];
    for (const t of texts) {
      events.push(JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } }));
      events.push(JSON.stringify({ type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: t } }));
      events.push(JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t, extra: { text: 'no' } } }));
    }
    events.push(JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } }));
    for (const data of events) {
      const d = new AnthropicPassthroughDecoder();
      expect(d.push({ event: 'content_block_delta', data }), data).toEqual([{ kind: 'raw', data, event: 'content_block_delta', text: parsedText(data), good: true }]);
    }
  });
});
