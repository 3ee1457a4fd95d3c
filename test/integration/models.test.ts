/**
 * `GET /v1/models` and `GET /v1/models/{model}` through the official SDK: fixed and discovered lists,
 * ids containing `/` (the SDK percent-encodes them), a key's allow-list, and 404 model_not_found.
 */
import { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let upFixed: FakeUpstream;
let upDisc: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  [upFixed, upDisc] = await Promise.all([
    startOpenAIUpstream({ models: ['deepseek-ai/DeepSeek-V3', 'plain-model'] }),
    startOpenAIUpstream({ models: ['found-one', 'found-two'] }),
  ]);
  t = await startTestGateway({
    providers: [
      { name: 'ds', type: 'openai-compatible', baseUrl: upFixed.url, models: ['deepseek-ai/DeepSeek-V3', 'plain-model'] },
      // No --models: the list comes from the provider's own GET /models on start.
      { name: 'disc', type: 'openai-compatible', baseUrl: upDisc.url, models: null },
    ],
    keys: [{ name: 'test' }, { name: 'narrow', models: ['plain-model'] }],
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([upFixed, upDisc].map((u) => u?.close()));
});

describe('GET /v1/models', () => {
  it('lists fixed and discovered models in the OpenAI shape', async () => {
    const { data, response } = await t.client().models.list().withResponse();
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const ids = data.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['deepseek-ai/DeepSeek-V3', 'plain-model', 'found-one', 'found-two']));
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of data.data) {
      expect(m.object).toBe('model');
      expect(Number.isInteger(m.created)).toBe(true);
      expect(typeof m.owned_by).toBe('string');
    }
    // The discovery really asked the provider.
    expect(upDisc.requests.some((r) => r.method === 'GET' && r.path === '/v1/models')).toBe(true);
  });

  it("shows a key only the models of its allow-list", async () => {
    const page = await t.client({ apiKey: t.keys.narrow }).models.list();
    expect(page.data.map((m) => m.id)).toEqual(['plain-model']);
  });
});

describe('GET /v1/models/{model}', () => {
  it('retrieves an id containing `/` (sent as %2F)', async () => {
    const { data, response } = await t.client().models.retrieve('deepseek-ai/DeepSeek-V3').withResponse();
    expect(response.url).toContain('deepseek-ai%2FDeepSeek-V3');
    expect(data).toMatchObject({ id: 'deepseek-ai/DeepSeek-V3', object: 'model', owned_by: 'ds' });
    expect(Number.isInteger(data.created)).toBe(true);
  });

  it('retrieves a discovered model', async () => {
    const m = await t.client().models.retrieve('found-two');
    expect(m).toMatchObject({ id: 'found-two', object: 'model', owned_by: 'disc' });
  });

  it('404 model_not_found (NotFoundError) for an unknown id, slash or not', async () => {
    for (const id of ['no-such-model', 'nobody/no-such-model']) {
      let err: unknown;
      try {
        await t.client().models.retrieve(id);
      } catch (e) {
        err = e;
      }
      expect(err, id).toBeInstanceOf(NotFoundError);
      const nf = err as NotFoundError;
      expect(nf.status).toBe(404);
      expect(nf.code).toBe('model_not_found');
      expect(nf.type).toBe('invalid_request_error');
      expect(nf.message).toContain(id);
    }
  });

  it('404 for a model outside the key\'s allow-list', async () => {
    await expect(t.client({ apiKey: t.keys.narrow }).models.retrieve('deepseek-ai/DeepSeek-V3')).rejects.toBeInstanceOf(NotFoundError);
    await expect(t.client({ apiKey: t.keys.narrow }).models.retrieve('plain-model')).resolves.toMatchObject({ id: 'plain-model' });
  });

  it('a chat to the slashed id reaches the provider under that exact name', async () => {
    const r = await t.client().chat.completions.create({ model: 'deepseek-ai/DeepSeek-V3', messages: [{ role: 'user', content: 'slash' }] });
    expect(r.choices[0].message.content).toBe('Echo: slash');
    expect((upFixed.requests.at(-1)?.body as { model: string }).model).toBe('deepseek-ai/DeepSeek-V3');
  });
});
