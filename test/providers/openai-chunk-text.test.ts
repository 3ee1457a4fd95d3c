import { describe, expect, it } from 'vitest';
import { PlainChunkReader, plainChunk, plainChunkText } from '../../core/providers/openai/chunk-text.ts';
import { OpenAIStreamTranslator } from '../../core/providers/openai/stream.ts';

/** What the translator read before the fast path: the first choice's delta.content, else its text, else ''. */
function parsedText(data: string): string {
  const c = JSON.parse(data) as { choices?: Array<{ delta?: { content?: unknown }; text?: unknown }> };
  const f = c.choices?.[0];
  return typeof f?.delta?.content === 'string' ? f.delta.content : typeof f?.text === 'string' ? f.text : '';
}

const head = '"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini"';
const texts = ['', 'Hello', 'a "quoted" word', 'tab\there', 'é ü 中文 🎉', 'back\\slash', '"content": {', '"usage": 1', 'ends with \\'];
const chunks: string[] = [];
for (const t of texts) {
  chunks.push(`{${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(t)}},"logprobs":null,"finish_reason":null}]}`);
  chunks.push(`{${head},"choices":[{"index":0,"delta":{"role":"assistant","content":${JSON.stringify(t)},"refusal":null},"finish_reason":null}]}`);
  chunks.push(`{${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(t)}}},{"index":1,"delta":{"content":"other"}}]}`);
  chunks.push(`{${head},"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":${JSON.stringify(t)}}}]}`);
  chunks.push(`{${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(t)}},"logprobs":{"content":[{"token":"x","logprob":-1}]}}]}`);
  chunks.push(`{${head},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(t)}}}]}}]}`);
  chunks.push(`{${head},"choices":[{"index":0,"text":${JSON.stringify(t)},"finish_reason":null}]}`);
  chunks.push(`{${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(t)}}}],"system_fingerprint":"fp"}`);
}
chunks.push(`{${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`);
chunks.push(`{${head},"service_tier":"default","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"ok \\u00e9"},"logprobs":null,"finish_reason":null}],"obfuscation":"abc"}`);
chunks.push(`{${head},"choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}]}`);
chunks.push(`{${head},"choices":[{"index":0,"delta":{"content":7}}]}`);

describe("plainChunkText (reading a chunk's text without JSON.parse)", () => {
  it('gives the parsed text whenever it answers, and answers for the common shapes', () => {
    let answered = 0;
    for (const c of chunks) {
      const fast = plainChunkText(c);
      if (fast === undefined) continue;
      answered++;
      expect(fast, c).toBe(parsedText(c));
    }
    // The plain content, role and finish chunks of every text above take the fast path.
    expect(answered).toBeGreaterThanOrEqual(texts.length * 2);
  });

  it("one stream's reader answers as plainChunk does, chunk by chunk, when the members before choices stay or change", () => {
    const other = '"id":"chatcmpl-2","object":"chat.completion.chunk","created":2,"model":"gpt-4o"';
    const moved = chunks.map((c) => c.replace(head, other));
    // The reader matches from `choices` on after a chunk with the same start: a start that is a prefix of a
    // longer one (more members), or garbage after it, must still be judged whole.
    const tricky = [
      `{${head},"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`,
      `{${head},"system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"c"},"finish_reason":null}],"usage":{"prompt_tokens":1}}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"d"},"finish_reason":null}],"usage":null}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"e"},"finish_reason":"stop"}]}`,
      `{${head},"choices":[`,
    ];
    const reader = new PlainChunkReader();
    let fastTail = 0;
    for (const data of [...chunks, ...moved, ...tricky, ...chunks]) {
      const expected = plainChunk(data);
      expect(reader.read(data), data).toEqual(expected);
      if (expected !== undefined) fastTail++;
    }
    expect(fastTail).toBeGreaterThan(texts.length * 4);
  });

  it('declines chunks that need the full parse (usage, errors, choices: [], garbage)', () => {
    expect(plainChunkText(`{${head},"choices":[{"index":0,"delta":{"content":"a"}}],"usage":null}`)).toBeUndefined();
    expect(plainChunkText(`{${head},"choices":[],"usage":{"prompt_tokens":1}}`)).toBeUndefined();
    expect(plainChunkText(`{${head},"choices":[]}`)).toBeUndefined();
    expect(plainChunkText('{"error":{"message":"boom"}}')).toBeUndefined();
    expect(plainChunkText('{"id": "oops", "choices": [ <html>502 Bad Gateway</html>')).toBeUndefined();
    // Not JSON (a raw control character, a bad escape): the parse decides, as before.
    expect(plainChunkText(`{"id":"a\u0001b","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`)).toBeUndefined();
    expect(plainChunkText('{"id":"a","choices":[{"index":0,"delta":{"content":"\\x"},"finish_reason":null}]}')).toBeUndefined();
    expect(plainChunkText('{"id":"a","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"unknown":1}')).toBeUndefined();
  });

  it('the translator relays such chunks byte for byte with their text', () => {
    const t = new OpenAIStreamTranslator();
    const data = chunks[0];
    expect(t.push({ event: null, data })).toEqual([{ kind: 'chunk', json: data, text: '' }]);
    const hello = chunks[8];
    expect(t.push({ event: null, data: hello })).toEqual([{ kind: 'chunk', json: hello, text: 'Hello' }]);
    // OpenAI's `"usage":null` on every chunk (usage asked for) is cut, as the parsing path cuts it.
    const withNull = `${hello.slice(0, -1)},"usage":null}`;
    expect(t.push({ event: null, data: withNull })).toEqual([{ kind: 'chunk', json: hello, text: 'Hello' }]);
    const empty = `{${head},"choices":[],"usage":null}`;
    expect(t.push({ event: null, data: empty })).toEqual([]);
  });
});

describe('the neutral OpenAI decoder reads plain chunks without a parse, with the same events', () => {
  const chunkOf = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown>) =>
    JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });
  const stream = (extra: Record<string, unknown>) => [
    chunkOf({ role: 'assistant', content: '' }, null, extra),
    ...['Hel', '', 'lo "you"', ' é\n'].map((t) => chunkOf({ content: t }, null, extra)),
    chunkOf({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, null, extra),
    chunkOf({ content: 'after tool' }, null, extra),
    chunkOf({}, 'stop', extra),
    JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }),
    '[DONE]',
  ];
  it('gives the events the parsing path gives', async () => {
    const { OpenAIFrameDecoder } = await import('../../core/providers/openai/decode-call.ts');
    const run = (events: string[]) => {
      const d = new OpenAIFrameDecoder();
      return events.flatMap((data) => d.push({ event: null, data }));
    };
    // An unknown key keeps every chunk off the fast path: the parse alone decides there.
    const parsed = run(stream({ x_unknown: 1 }));
    const fast = run(stream({}));
    expect(fast).toEqual(parsed);
    expect(fast.filter((f) => f.kind === 'event' && f.event.type === 'text-delta')).toHaveLength(4);
  });
});
