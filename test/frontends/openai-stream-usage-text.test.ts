/** The upstream's own usage chunk goes out as it wrote it, with `cost` spliced into its `usage`, when nothing else changes. */
import { describe, expect, it } from 'vitest';
import { openAIChatFrontEnd } from '../../core/frontends/openai-chat/front-end.ts';
import { chunkCodec } from '../../core/frontends/openai-chat/codec.ts';
import type { CallRequest } from '../../core/pipeline/call-model.ts';
import { openAIAdapter } from '../../core/providers/openai/index.ts';
import { OpenAIStreamTranslator } from '../../core/providers/openai/stream.ts';
import { stringifyWithCost } from '../../core/pricing/cost.ts';

const usageChunk = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0}},"obfuscation":"ab"}';

function finalPieces(chunks: string[]) {
  const t = new OpenAIStreamTranslator();
  for (const data of chunks) t.push({ event: null, data });
  return t.push({ event: null, data: '[DONE]' });
}

describe("an OpenAI stream's usage chunk", () => {
  it('is handed on with its text when it is the upstream’s own choices: [] chunk, and without it otherwise', () => {
    expect(finalPieces([usageChunk])[0]).toMatchObject({ kind: 'usage', text: usageChunk });
    // Usage riding on a content chunk: what goes out is a different chunk (choices: []), so no text.
    const onContent = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
    expect(finalPieces([onContent])[0]).not.toHaveProperty('text');
    // Groq's x_groq.usage: rebuilt.
    const groq = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"x_groq":{"id":"r","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}}';
    expect(finalPieces([groq])[0]).not.toHaveProperty('text');
  });

  it('goes out as written with the cost added, the same JSON the rebuilt chunk gives', () => {
    const renderer = openAIChatFrontEnd.stream({ streamUsage: true } as CallRequest, { requestId: 'r', requestedModel: 'm', model: 'm', provider: 'p' });
    const upstream = JSON.parse(usageChunk) as Record<string, unknown>;
    const usage = { inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: false };
    const out = renderer.end({ usage, costUsd: 0.0000123, estimated: false, upstreamUsage: upstream, upstreamUsageText: usageChunk });
    expect(out).toBe(`data: ${usageChunk.replace('"cached_tokens":0}}', '"cached_tokens":0},"cost":0.0000123}')}\n\ndata: [DONE]\n\n`);
    const copy = JSON.parse(usageChunk) as { usage: Record<string, unknown> };
    expect(JSON.parse(out.split('\n')[0].slice(6))).toEqual(JSON.parse(stringifyWithCost(copy, copy.usage, 0.0000123)));
    // Estimated counts are the gateway's: the chunk is rebuilt with them.
    const estimated = renderer.end({ usage: { ...usage, outputTokens: 9 }, costUsd: 0.5, estimated: true, upstreamUsage: upstream, upstreamUsageText: usageChunk });
    expect(JSON.parse(estimated.split('\n')[0].slice(6)).usage.completion_tokens).toBe(9);
  });

  it('reaches the renderer through the chat codec as a usage frame with its text', () => {
    const codec = chunkCodec({ runtime: { adapter: { chatStream: () => new OpenAIStreamTranslator() } } } as never, () => ({}) as never, () => '');
    const frames = codec.frames({} as never);
    frames.push({ event: null, data: usageChunk });
    expect(frames.push({ event: null, data: '[DONE]' })[0]).toMatchObject({ kind: 'usage', rawText: usageChunk });
  });
});

describe('a non-stream OpenAI answer through the chat codec', () => {
  // Pretty-printed, `1.0` and a `\u` escape: what re-serialising would change.
  const text = '{\n  "id": "chatcmpl-2",\n  "object": "chat.completion",\n  "choices": [{"index": 0, "message": {"role": "assistant", "content": "caf\\u00e9"}, "finish_reason": "stop"}],\n  "temperature": 1.0,\n  "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}\n}';
  const usage = { inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, estimated: false };
  const decode = (json: unknown) => {
    const codec = chunkCodec({ runtime: { adapter: openAIAdapter } } as never, () => ({}) as never, () => '');
    const answer = codec.decode(json, text, {} as never);
    if (answer.kind !== 'native') throw new Error('expected a native answer');
    return answer;
  };

  it('goes out exactly as the upstream wrote it when the call is unpriced', () => {
    expect(decode(JSON.parse(text)).render({ usage, costUsd: null, estimated: false })).toBe(text);
  });

  it('gets the estimated usage it lacked, re-serialised, when the upstream reported none', () => {
    const bare = JSON.parse(text) as Record<string, unknown>;
    delete bare.usage;
    const out = JSON.parse(decode(bare).render({ usage: { ...usage, estimated: true }, costUsd: null, estimated: true })) as { usage: Record<string, unknown> };
    expect(out.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
  });

  it('keeps its text with the cost spliced in when priced', () => {
    const out = decode(JSON.parse(text)).render({ usage, costUsd: 0.25, estimated: false });
    expect(out).toBe(text.replace('"total_tokens": 7}', '"total_tokens": 7,"cost":0.25}'));
  });
});
