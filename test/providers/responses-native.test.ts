/** The native Responses request for OpenAI and Azure: the body as sent, `model` rewritten, `user` dropped, the right URL and auth header. */
import { describe, expect, it } from 'vitest';
import { nativeResponsesRequest, servesResponsesNatively } from '../../core/providers/responses-native.ts';
import type { ProviderSettings } from '../../core/providers/types.ts';
import { providerSettings } from '../support/provider-settings.ts';

const provider = (p: Partial<ProviderSettings>): ProviderSettings => providerSettings({ name: 'p', type: 'openai', baseUrl: 'https://api.openai.com/v1', ...p });

const body = { model: 'alias-name', input: 'hi', store: false, include: ['reasoning.encrypted_content'], user: 'someone', tools: [{ type: 'web_search' }] };

describe('nativeResponsesRequest', () => {
  it('OpenAI: {base}/responses, Bearer key, only model rewritten and user dropped', () => {
    const r = nativeResponsesRequest(body, { provider: provider({}), model: 'gpt-5', apiKey: 'sk-up', stream: true });
    expect(r.url).toBe('https://api.openai.com/v1/responses');
    expect(r.headers.authorization).toBe('Bearer sk-up');
    expect(r.headers.accept).toBe('text/event-stream');
    const sent = JSON.parse(r.body!) as Record<string, unknown>;
    expect(sent).toEqual({ model: 'gpt-5', input: 'hi', store: false, include: ['reasoning.encrypted_content'], tools: [{ type: 'web_search' }], stream: true });
  });

  it('Azure v1 API: {endpoint}/openai/v1/responses, api-key header, the deployment as model', () => {
    const p = provider({ type: 'azure', baseUrl: 'https://res.openai.azure.com/openai/v1', options: { deployments: { 'gpt-5': 'my-gpt5' } } });
    const r = nativeResponsesRequest(body, { provider: p, model: 'gpt-5', apiKey: 'az-key', stream: false });
    expect(r.url).toBe('https://res.openai.azure.com/openai/v1/responses');
    expect(r.headers['api-key']).toBe('az-key');
    expect(r.headers.authorization).toBeUndefined();
    expect((JSON.parse(r.body!) as { model: string }).model).toBe('my-gpt5');
  });

  it('Azure classic API (apiVersion option): {endpoint}/openai/responses?api-version=', () => {
    const p = provider({ type: 'azure', baseUrl: 'https://res.openai.azure.com', options: { apiVersion: '2025-04-01-preview' } });
    const r = nativeResponsesRequest(body, { provider: p, model: 'gpt-5', apiKey: 'k', stream: false });
    expect(r.url).toBe('https://res.openai.azure.com/openai/responses?api-version=2025-04-01-preview');
  });

  it('only OpenAI and Azure serve Responses natively', () => {
    expect(['openai', 'azure', 'openai-compatible', 'anthropic', 'gemini', 'demo'].map((t) => servesResponsesNatively(t as ProviderSettings['type']))).toEqual([true, true, false, false, false, false]);
  });
});
