/** `passthroughRequest`: which adapters serve the pass-through endpoints, and the requests they build. */
import { describe, expect, it } from 'vitest';
import { adapterFor } from '../../core/providers/registry.ts';
import type { CallContext, PassthroughBody, ProviderSettings } from '../../core/providers/types.ts';
import { providerSettings } from '../support/provider-settings.ts';

const settings = (over: Partial<ProviderSettings>): ProviderSettings => providerSettings({ name: 'p', type: 'openai', baseUrl: 'https://api.example.com/v1', ...over });
const ctx = (provider: ProviderSettings, model: string): CallContext => ({ provider, model, apiKey: 'sk-up', stream: false });
const json: PassthroughBody = { contentType: 'application/json', build: (m) => JSON.stringify({ model: m, prompt: 'x' }) };
const multipart: PassthroughBody = { contentType: 'multipart/form-data; boundary=b', build: (m) => Buffer.from(`model=${m}`) };

describe('passthroughRequest', () => {
  it('is served by OpenAI-protocol adapters only', () => {
    expect(typeof adapterFor('openai').passthroughRequest).toBe('function');
    expect(typeof adapterFor('openai-compatible').passthroughRequest).toBe('function');
    expect(typeof adapterFor('azure').passthroughRequest).toBe('function');
    expect(adapterFor('demo').passthroughRequest).toBeUndefined();
    expect(adapterFor('anthropic').passthroughRequest).toBeUndefined();
    expect(adapterFor('gemini').passthroughRequest).toBeUndefined();
  });

  it('openai: the path under the base URL, the client body with the model, the bearer key', () => {
    const r = adapterFor('openai').passthroughRequest!('/completions', json, ctx(settings({}), 'gpt-3.5-turbo-instruct'));
    expect(r).toEqual({
      method: 'POST',
      url: 'https://api.example.com/v1/completions',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer sk-up' },
      body: '{"model":"gpt-3.5-turbo-instruct","prompt":"x"}',
    });
    const a = adapterFor('openai-compatible').passthroughRequest!('/audio/translations', multipart, ctx(settings({ type: 'openai-compatible' }), 'whisper-1'));
    expect(a.url).toBe('https://api.example.com/v1/audio/translations');
    expect(a.headers['content-type']).toBe('multipart/form-data; boundary=b');
    expect(a.body).toBeUndefined();
    expect(Buffer.from(a.bodyBytes as Uint8Array).toString()).toBe('model=whisper-1');
  });

  it('azure: v1 API with the deployment as model; classic API with the deployment in the path', () => {
    const options = { deployments: { 'gpt-image-1': 'images-dep' } };
    const v1 = adapterFor('azure').passthroughRequest!('/images/generations', json, ctx(settings({ type: 'azure', baseUrl: 'https://x.openai.azure.com', options }), 'gpt-image-1'));
    expect(v1.url).toBe('https://x.openai.azure.com/openai/v1/images/generations');
    expect(v1.headers['api-key']).toBe('sk-up');
    expect(v1.headers.authorization).toBeUndefined();
    expect(JSON.parse(v1.body as string).model).toBe('images-dep');
    const classic = adapterFor('azure').passthroughRequest!(
      '/audio/transcriptions',
      multipart,
      ctx(settings({ type: 'azure', baseUrl: 'https://x.openai.azure.com/openai', options: { apiVersion: '2024-10-21' } }), 'whisper'),
    );
    expect(classic.url).toBe('https://x.openai.azure.com/openai/deployments/whisper/audio/transcriptions?api-version=2024-10-21');
  });
});
