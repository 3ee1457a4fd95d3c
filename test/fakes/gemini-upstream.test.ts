import { ApiError, FinishReason, GoogleGenAI } from '@google/genai';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeOptions, FakeUpstream } from './fault.ts';
import { startGeminiUpstream } from './gemini-upstream.ts';
import { fakeEmbedding } from './scenario.ts';

// Proves the fake speaks the Gemini API faithfully by driving it with the official @google/genai SDK.
// That SDK only retries when httpOptions.retryOptions is set, so errors surface at once here.

let fake: FakeUpstream | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(options?: Partial<FakeOptions>, apiKey = 'gem-key') {
  fake = await startGeminiUpstream(options);
  const ai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: fake.url } });
  return { fake, ai };
}

const MODEL = 'gemini-2.5-flash';
const weatherTool = { functionDeclarations: [{ name: 'get_weather', description: 'Weather', parametersJsonSchema: { type: 'object' } }] };

describe('gemini fake', () => {
  it('generateContent: echo, system instruction, usage, API key header', async () => {
    const { fake, ai } = await setup();
    const res = await ai.models.generateContent({
      model: MODEL,
      contents: 'hello gemini',
      config: { systemInstruction: 'You answer in French always' },
    });
    expect(res.text).toBe('[sys:You answer in French] Echo: hello gemini');
    expect(res.candidates?.[0].finishReason).toBe(FinishReason.STOP);
    expect(res.modelVersion).toBe(MODEL);
    // prompt = (5 + 3) system + (2 + 3) user; candidates = 7 words
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 13, candidatesTokenCount: 7, totalTokenCount: 20 });
    expect(res.usageMetadata?.thoughtsTokenCount).toBeUndefined();
    const rec = fake.requests[0];
    // @google/genai 3.x defaults to the v1 API (protocol.md documents v1beta); the fake serves both.
    expect(rec).toMatchObject({ method: 'POST', path: `/v1/models/${MODEL}:generateContent` });
    expect(rec.headers['x-goog-api-key']).toBe('gem-key');
    expect(rec.body).toMatchObject({ systemInstruction: { parts: [{ text: 'You answer in French always' }] } });
  });

  it('usageMetadata: thoughts excluded from candidates, cached included in prompt', async () => {
    const { ai } = await setup({ reasoningTokens: 11, cachedTokens: 6 });
    const res = await ai.models.generateContent({ model: MODEL, contents: 'think hard' });
    expect(res.usageMetadata).toMatchObject({
      promptTokenCount: 5 + 6,
      cachedContentTokenCount: 6,
      candidatesTokenCount: 3,
      thoughtsTokenCount: 11,
      totalTokenCount: 11 + 3 + 11,
    });
  });

  it('JSON mode and maxOutputTokens', async () => {
    const { ai } = await setup();
    const json = await ai.models.generateContent({ model: MODEL, contents: 'give json', config: { responseMimeType: 'application/json' } });
    expect(JSON.parse(json.text!)).toEqual({ echo: 'give json' });
    const short = await ai.models.generateContent({ model: MODEL, contents: 'p q r s', config: { maxOutputTokens: 3 } });
    expect(short.text).toBe('Echo: p q');
    expect(short.candidates?.[0].finishReason).toBe(FinishReason.MAX_TOKENS);
  });

  it('generateContentStream: one event per word, running usage, finishReason last', async () => {
    const { fake } = await setup();
    const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: fake.url, apiVersion: 'v1beta' } });
    const stream = await ai.models.generateContentStream({ model: MODEL, contents: 'one two three' });
    const texts: string[] = [];
    const candidateCounts: (number | undefined)[] = [];
    const finishes: (string | undefined)[] = [];
    for await (const chunk of stream) {
      texts.push(chunk.text ?? '');
      candidateCounts.push(chunk.usageMetadata?.candidatesTokenCount);
      finishes.push(chunk.candidates?.[0].finishReason);
    }
    expect(texts).toEqual(['Echo: ', 'one ', 'two ', 'three']);
    expect(candidateCounts).toEqual([1, 2, 3, 4]);
    expect(finishes).toEqual([undefined, undefined, undefined, FinishReason.STOP]);
    expect(fake.requests[0].path).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
  });

  it('function calls: whole call in one part, stream included; a functionResponse is echoed', async () => {
    const { ai } = await setup();
    const res = await ai.models.generateContent({ model: MODEL, contents: 'weather?', config: { tools: [weatherTool] } });
    expect(res.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
    expect(res.candidates?.[0].finishReason).toBe(FinishReason.STOP);

    const stream = await ai.models.generateContentStream({ model: MODEL, contents: 'weather?', config: { tools: [weatherTool] } });
    const calls = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);

    const answer = await ai.models.generateContent({
      model: MODEL,
      config: { tools: [weatherTool] },
      contents: [
        { role: 'user', parts: [{ text: 'weather?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'warm' } } }] },
      ],
    });
    expect(answer.text).toBe('Tool said: warm');
  });

  it('gemini-3: the function call carries a thoughtSignature; a follow-up without it (or with a forged one) is a 400', async () => {
    const { ai } = await setup({ models: ['gemini-3-pro-preview'] });
    const model = 'gemini-3-pro-preview';
    const first = await ai.models.generateContent({ model, contents: 'weather?', config: { tools: [weatherTool] } });
    const part = first.candidates?.[0].content?.parts?.[0];
    expect(part?.functionCall).toEqual({ name: 'get_weather', args: { city: 'Paris' } });
    expect(part?.thoughtSignature).toMatch(/^[A-Za-z0-9+/]{100,}={0,2}$/);
    const followUp = (call: Record<string, unknown>) =>
      ai.models.generateContent({
        model,
        config: { tools: [weatherTool] },
        contents: [
          { role: 'user', parts: [{ text: 'weather?' }] },
          { role: 'model', parts: [call] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'warm' } } }] },
        ],
      });
    const fc = { functionCall: { name: 'get_weather', args: { city: 'Paris' } } };
    const missing = await followUp(fc).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(400);
    expect((missing as ApiError).message).toContain('missing a thought_signature');
    const forged = await followUp({ ...fc, thoughtSignature: 'c2lnLUE=' }).catch((e: unknown) => e);
    expect((forged as ApiError).status).toBe(400);
    const placeholder = await followUp({ ...fc, thoughtSignature: 'skip_thought_signature_validator' }).catch((e: unknown) => e);
    expect((placeholder as ApiError).status).toBe(400);
    const ok = await followUp({ ...fc, thoughtSignature: part?.thoughtSignature });
    expect(ok.text).toBe('Tool said: warm');

    // The streamed call is signed too.
    const stream = await ai.models.generateContentStream({ model, contents: 'weather?', config: { tools: [weatherTool] } });
    const sigs = [];
    for await (const chunk of stream) for (const p of chunk.candidates?.[0].content?.parts ?? []) if (p.thoughtSignature) sigs.push(p.thoughtSignature);
    expect(sigs).toHaveLength(1);
  });

  it('embedContent (sent as batchEmbedContents by the SDK) and the model list', async () => {
    const { fake, ai } = await setup({ models: ['gemini-x', 'gemini-embedding-001'] });
    const emb = await ai.models.embedContent({
      model: 'gemini-embedding-001',
      contents: ['first text', 'second'],
      config: { outputDimensionality: 12 },
    });
    expect(emb.embeddings?.map((e) => e.values)).toEqual([fakeEmbedding('first text', 12), fakeEmbedding('second', 12)]);
    expect(fake.requests[0].path).toBe('/v1/models/gemini-embedding-001:batchEmbedContents');

    const single = await fetch(`${fake.url}/v1beta/models/gemini-embedding-001:embedContent?key=k`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'first text' }] } }),
    });
    expect(await single.json()).toEqual({ embedding: { values: fakeEmbedding('first text') } });

    const names: string[] = [];
    for await (const m of await ai.models.list()) names.push(m.name ?? '');
    expect(names).toEqual(['models/gemini-x', 'models/gemini-embedding-001']);
  });

  it('errors: status fault → ApiError with that status and the Gemini error body', async () => {
    const { fake, ai } = await setup();
    fake.queueFault({ kind: 'status', status: 429 }, { kind: 'status', status: 503 });
    const err = await ai.models.generateContent({ model: MODEL, contents: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect(JSON.parse((err as ApiError).message)).toEqual({
      error: { code: 429, message: expect.any(String), status: 'RESOURCE_EXHAUSTED' },
    });
    await expect(ai.models.generateContentStream({ model: MODEL, contents: 'x' })).rejects.toMatchObject({ status: 503 });
    expect(fake.requests).toHaveLength(2); // no SDK retries
  });

  it('requireKey: 401 without the key, accepted via header or ?key=', async () => {
    const { fake, ai } = await setup({ requireKey: 'right' }, 'wrong');
    await expect(ai.models.generateContent({ model: MODEL, contents: 'x' })).rejects.toMatchObject({ status: 401 });
    const good = new GoogleGenAI({ apiKey: 'right', httpOptions: { baseUrl: fake.url } });
    await expect(good.models.generateContent({ model: MODEL, contents: 'x' })).resolves.toMatchObject({ text: 'Echo: x' });
    const viaQuery = await fetch(`${fake.url}/v1beta/models?key=right`);
    expect(viaQuery.status).toBe(200);
  });

  it('a stream reset mid-way or with garbage data makes iteration throw', async () => {
    const { fake, ai } = await setup();
    fake.queueFault({ kind: 'reset-after-chunks', chunks: 1 }, { kind: 'malformed' });
    for (let i = 0; i < 2; i++) {
      const stream = await ai.models.generateContentStream({ model: MODEL, contents: 'a b c' });
      await expect(
        (async () => {
          for await (const _ of stream);
        })(),
      ).rejects.toThrow();
    }
  });
});
