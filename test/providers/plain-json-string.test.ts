import { describe, expect, it } from 'vitest';
import { AnthropicPassthroughDecoder } from '../../core/providers/anthropic/passthrough.ts';
import { uniqueStringValue } from '../../core/providers/plain-json-string.ts';

const texts = ['', 'Hello', 'a "quoted" "text": word', 'tab\there\nnew', 'é 中文 🎉', 'back\\slash\\', '{"partial_json": 1}'];

describe('uniqueStringValue', () => {
  it('reads delta.text / delta.partial_json as JSON.parse does', () => {
    for (const t of texts) {
      const text = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
      expect(uniqueStringValue(text, 'text')).toBe(t);
      const json = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: t } });
      expect(uniqueStringValue(json, 'partial_json')).toBe(t);
    }
  });

  it('declines a key that is absent, repeated or not a string', () => {
    expect(uniqueStringValue('{"delta":{"type":"text_delta"}}', 'text')).toBeUndefined();
    expect(uniqueStringValue('{"text":"a","x":{"text":"b"}}', 'text')).toBeUndefined();
    expect(uniqueStringValue('{"text":5}', 'text')).toBeUndefined();
    expect(uniqueStringValue('{"text":"unterminated', 'text')).toBeUndefined();
  });

  it('the Anthropic pass-through relays the event as sent with its text', () => {
    const d = new AnthropicPassthroughDecoder();
    const data = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'say "hi"' } });
    expect(d.push({ event: 'content_block_delta', data })).toEqual([{ kind: 'raw', data, event: 'content_block_delta', text: 'say "hi"', good: true }]);
  });
});
