/** The fake Responses upstream is checked with the official `openai` SDK's own strict stream accumulator. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from './fault.ts';
import { startOpenAIResponsesUpstream } from './openai-responses-upstream.ts';

let up: FakeUpstream;
let client: OpenAI;
beforeAll(async () => {
  up = await startOpenAIResponsesUpstream();
  client = new OpenAI({ apiKey: 'sk-fake', baseURL: up.url, maxRetries: 0 });
});
afterAll(() => up?.close());

const tool = { type: 'function' as const, name: 'get_weather', description: 'weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } };

describe('fake OpenAI Responses upstream', () => {
  it('answers create with a Response the SDK reads (output_text, usage)', async () => {
    const r = await client.responses.create({ model: 'gpt-5-codex', input: 'hello there' });
    expect(r.output_text).toBe('Echo: hello there');
    expect(r.usage).toMatchObject({ input_tokens: 5, output_tokens: 3, total_tokens: 8 });
  });

  it('streams the whole event sequence for text, reasoning and function calls', async () => {
    up.options.reasoningTokens = 7;
    try {
      const s = client.responses.stream({ model: 'gpt-5-codex', input: 'hi you', include: ['reasoning.encrypted_content'] });
      const types: string[] = [];
      s.on('event', (e) => types.push(e.type));
      const final = await s.finalResponse();
      expect(final.output_text).toBe('Echo: hi you');
      expect(final.output[0]).toMatchObject({ type: 'reasoning' });
      expect((final.output[0] as { encrypted_content?: string }).encrypted_content).toMatch(/^gAAAAB/);
      expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(7);
      expect(types[0]).toBe('response.created');
      expect(types.at(-1)).toBe('response.completed');
    } finally {
      up.options.reasoningTokens = undefined;
    }
    const s2 = client.responses.stream({ model: 'gpt-5-codex', input: 'weather?', tools: [tool] });
    const final2 = await s2.finalResponse();
    expect(final2.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' });
  });
});
