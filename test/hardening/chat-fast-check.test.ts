/**
 * The chat fast path's yes must be the schema's yes: generated bodies (common shapes, edge values,
 * wrong types) are checked by both; whenever the quick check accepts, zod accepts the same body.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatRequestSchema } from '../../core/gateway/schemas/chat.ts';
import { isPlainValidChat } from '../../core/gateway/schemas/chat-fast.ts';

const anyValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -5, max: 300 }),
  fc.double({ min: -3, max: 3, noNaN: true }),
  fc.constantFrom(0, 1, 2, 128, 129, -0, 1.5, 2 ** 53, -(2 ** 53), 1e300),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('low', 'high', 'max', 'auto', 'text', 'user'),
  fc.constant([]),
  fc.constant({}),
  fc.constant({ include_usage: true }),
  fc.constant({ include_usage: 'yes' }),
  fc.constant({ include_obfuscation: false }),
);
const content = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.constant(5),
  fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 4 }) }), fc.record({ type: fc.constantFrom('text', 'image_url', 'bogus'), text: anyValue })), { maxLength: 3 }),
);
const message = fc.record(
  {
    role: fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function', 'robot', 5),
    content,
    name: anyValue,
    tool_call_id: anyValue,
    tool_calls: anyValue,
    refusal: anyValue,
    extra: anyValue,
  },
  { requiredKeys: ['role'] },
);
const keys = [
  'max_completion_tokens', 'max_tokens', 'n', 'temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'seed', 'logprobs',
  'parallel_tool_calls', 'stream', 'stream_options', 'service_tier', 'store', 'user', 'reasoning_effort', 'verbosity', 'stop', 'tools',
  'top_logprobs', 'metadata', 'my_extension',
] as const;
const params = fc.array(fc.tuple(fc.constantFrom(...keys), anyValue), { maxLength: 3 }).map((entries) => Object.fromEntries(entries));
const body = fc.record(
  {
    model: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('gpt-4o-mini', '', 'x'.repeat(257), 'x'.repeat(256)) }, { weight: 1, arbitrary: anyValue }),
    messages: fc.oneof(
      { weight: 3, arbitrary: fc.array(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: fc.string({ maxLength: 8 }) }), { minLength: 1, maxLength: 3 }) },
      { weight: 3, arbitrary: fc.array(message, { maxLength: 4 }) },
      { weight: 1, arbitrary: anyValue },
    ),
    params,
  },
  { requiredKeys: ['model', 'messages', 'params'] },
).map(({ params: p, ...rest }) => ({ ...rest, ...p }) as Record<string, unknown>);

describe('isPlainValidChat agrees with the chat schema', () => {
  it('accepts only what zod accepts (20,000 generated bodies), and accepts the common ones', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (b) => {
        if (!isPlainValidChat(b)) return true;
        accepted++;
        return chatRequestSchema.safeParse(b).success;
      }),
      { numRuns: 20_000 },
    );
    expect(accepted).toBeGreaterThan(1000);
  });

  it('says yes to the usual requests', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'again', name: 'ann' },
    ];
    expect(isPlainValidChat({ model: 'gpt-4o-mini', messages, temperature: 0.2, max_tokens: 256 })).toBe(true);
    expect(isPlainValidChat({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true }, my_extension: { a: 1 } })).toBe(true);
    expect(isPlainValidChat({ model: 'gpt-4o-mini', messages, tools: [] })).toBe(false);
    expect(isPlainValidChat(JSON.parse('{"model":"m","messages":[{"role":"user","content":"x"}],"__proto__":{"a":1},"constructor":1}'))).toBe(false);
  });
});
