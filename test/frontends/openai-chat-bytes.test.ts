import { describe, expect, it } from 'vitest';
import { spliceUsageCost } from '../../core/frontends/cost-splice.ts';
import { stringifyWithCost } from '../../core/pricing/cost.ts';
import { clientChatText, openAIChatBody, openAIChatRequest } from '../../core/providers/openai/request.ts';
import type { CallContext, ChatRequest, ProviderSettings } from '../../core/providers/types.ts';

const provider: ProviderSettings = { name: 'p', type: 'openai-compatible', preset: null, baseUrl: 'http://127.0.0.1:1/v1', models: null, priority: 1, keyEnv: null, keySource: 'none', options: {}, seq: 1 };
const ctx = (over: Partial<CallContext> = {}): CallContext => ({ provider, model: 'gpt-4o-mini', apiKey: null, stream: false, ...over });

describe("the client's request bytes, forwarded when nothing is rewritten", () => {
  const messages = [{ role: 'user', content: 'hi "there" \u00e9' }];

  it('non-stream: the exact text, and it means what the rewritten body means', () => {
    const text = `{ "model": "gpt-4o-mini",\n "messages": ${JSON.stringify(messages)}, "temperature": 0.5 }`;
    const body = JSON.parse(text) as ChatRequest;
    expect(clientChatText(body, text, ctx())).toBe(text);
    expect(JSON.parse(clientChatText(body, text, ctx()) ?? '')).toEqual(openAIChatBody(body, ctx()));
  });

  it('stream: include_usage spliced in, equal to the rewritten body', () => {
    const text = JSON.stringify({ model: 'gpt-4o-mini', messages, stream: true });
    const body = JSON.parse(text) as ChatRequest;
    const out = clientChatText(body, text, ctx({ stream: true }));
    expect(out).not.toBeNull();
    expect(JSON.parse(out ?? '')).toEqual(openAIChatBody(body, ctx({ stream: true })));
    // A provider known to refuse stream_options gets the text as sent.
    const refusing = ctx({ stream: true, provider: { ...provider, options: { streamOptions: false } } });
    expect(clientChatText(body, text, refusing)).toBe(text);
  });

  it("stream: the client's own include_usage: true is forwarded as sent", () => {
    const text = JSON.stringify({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } });
    const body = JSON.parse(text) as ChatRequest;
    expect(clientChatText(body, text, ctx({ stream: true }))).toBe(text);
    expect(JSON.parse(text)).toEqual(openAIChatBody(body, ctx({ stream: true })));
    const refusing = ctx({ stream: true, provider: { ...provider, options: { streamOptions: false } } });
    expect(clientChatText(body, text, refusing)).toBeNull();
  });

  it("sends the client's own bytes when its text goes unchanged, and never when a rewrite applies", () => {
    const text = `{ "model": "gpt-4o-mini",\n "messages": ${JSON.stringify(messages)} }`;
    const bytes = Buffer.from(text);
    const body = JSON.parse(text) as ChatRequest;
    const sent = openAIChatRequest(body, ctx({ bodyText: text, bodyBytes: bytes }));
    expect(sent.bodyBytes).toBe(bytes);
    expect(sent.body).toBe(text);
    // Another model name: the rewritten text goes, not the client's bytes.
    const renamed = openAIChatRequest(body, ctx({ model: 'gpt-4o', bodyText: text, bodyBytes: bytes }));
    expect(renamed.bodyBytes).toBeUndefined();
    expect(JSON.parse(renamed.body ?? '')).toMatchObject({ model: 'gpt-4o' });
    // A stream gets include_usage spliced in: its text differs, so the bytes stay home.
    const streamText = JSON.stringify({ model: 'gpt-4o-mini', messages, stream: true });
    const streamed = openAIChatRequest(JSON.parse(streamText) as ChatRequest, ctx({ stream: true, bodyText: streamText, bodyBytes: Buffer.from(streamText) }));
    expect(streamed.bodyBytes).toBeUndefined();
  });

  it('declines when a rewrite applies: another model, `user`, the client\'s own stream_options', () => {
    const t = (b: Record<string, unknown>) => JSON.stringify(b);
    const cases: Array<[Record<string, unknown>, CallContext]> = [
      [{ model: 'alias', messages }, ctx()],
      [{ model: 'gpt-4o-mini', messages, user: 'u1' }, ctx()],
      [{ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: false } }, ctx({ stream: true })],
    ];
    for (const [b, c] of cases) expect(clientChatText(b as ChatRequest, t(b), c)).toBeNull();
  });
});

describe('usage.cost spliced into the upstream answer', () => {
  const answer = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'a "usage": {} in text' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 } },
  };

  it('gives the same JSON as re-serialising with the cost, the cost written as a plain decimal', () => {
    const text = JSON.stringify(answer);
    const json = JSON.parse(text) as typeof answer;
    const spliced = spliceUsageCost(text, json.usage, 0.0000061499999999999996);
    expect(spliced).toContain('"cost":0.00000615}');
    const copy = JSON.parse(text) as typeof answer;
    expect(JSON.parse(spliced ?? '')).toEqual(JSON.parse(stringifyWithCost(copy, copy.usage, 0.0000061499999999999996)));
  });

  it('keeps the upstream formatting, and handles an empty usage', () => {
    const text = '{\n  "id": "x",\n  "usage": {}\n}';
    expect(spliceUsageCost(text, {}, 0.5)).toBe('{\n  "id": "x",\n  "usage": {"cost":0.5}\n}');
  });

  it('declines when the usage already has a cost or cannot be told apart', () => {
    expect(spliceUsageCost('{"usage":{"cost":1}}', { cost: 1 }, 0.5)).toBeNull();
    expect(spliceUsageCost('{"a":{"usage":{}},"usage":{}}', {}, 0.5)).toBeNull();
    expect(spliceUsageCost('{"\\u0075sage":{"x":1},"b":{"usage":{}}}', { x: 1 }, 0.5)).toBeNull();
    // A second key found after the first, however far, and whatever comes between.
    expect(spliceUsageCost('{"usage":{},"content":"a usage\\":x usage": z","b":{"usage":{}}}', {}, 0.5)).toBeNull();
  });

  it('counts only whole `"usage":` keys: `usage":` after anything but a quote is not one', () => {
    expect(spliceUsageCost('{"myusage":1,"content":"usage\\":","usage":{"n":1}}', { n: 1 }, 0.5)).toBe('{"myusage":1,"content":"usage\\":","usage":{"n":1,"cost":0.5}}');
  });

  it('splices without re-reading the usage when no key can be escaped, and checks it when one can', () => {
    expect(spliceUsageCost('{"id":"x","usage":{"prompt_tokens":3}}', { prompt_tokens: 3 }, 0.5)).toBe('{"id":"x","usage":{"prompt_tokens":3,"cost":0.5}}');
    // An escape elsewhere in the text: the span is compared with the parsed usage, and it matches.
    const escaped = '{"content":"caf\\u00e9","usage":{"prompt_tokens":3}}';
    expect(spliceUsageCost(escaped, { prompt_tokens: 3 }, 0.5)).toBe('{"content":"caf\\u00e9","usage":{"prompt_tokens":3,"cost":0.5}}');
  });
});
