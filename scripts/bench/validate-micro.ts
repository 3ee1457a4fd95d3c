/**
 * Micro-benchmark of request validation on the hot path: `validateChatRequest` (the zod schema) on a
 * typical chat body, a tool-calling one and a 2 MB one, next to `JSON.parse` of the same text for scale.
 * Run: `node scripts/bench/validate-micro.ts` (prints µs per call).
 */
import { validateChatRequest } from '../../core/gateway/chat-validate.ts';

const bodies: Record<string, object> = {
  typical: {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello in five words.' },
    ],
    temperature: 0.2,
    max_tokens: 256,
  },
  tools: {
    model: 'gpt-4o',
    messages: Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0 ? { role: 'user', content: [{ type: 'text', text: `question ${i}` }] } : { role: 'assistant', content: `answer ${i}` },
    ),
    tools: Array.from({ length: 10 }, (_, i) => ({
      type: 'function',
      function: { name: `tool_${i}`, description: 'does things', parameters: { type: 'object', properties: { a: { type: 'string' } } } },
    })),
    tool_choice: 'auto',
    stream: true,
    stream_options: { include_usage: true },
  },
  large: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }] },
};

function time(fn: () => void, iterations: number): number {
  for (let i = 0; i < Math.min(1000, iterations); i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  return ((performance.now() - t0) * 1000) / iterations;
}

for (const [name, body] of Object.entries(bodies)) {
  const text = JSON.stringify(body);
  const n = name === 'large' ? 200 : 50_000;
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const validate = time(() => validateChatRequest(parsed), n);
  const parse = time(() => JSON.parse(text), n);
  process.stdout.write(`${name.padEnd(8)} ${String(text.length).padStart(8)} bytes  validate ${validate.toFixed(2)} µs  JSON.parse ${parse.toFixed(2)} µs\n`);
}
