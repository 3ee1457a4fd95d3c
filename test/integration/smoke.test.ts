import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

describe('smoke: OpenAI SDK through the gateway to a fake OpenAI upstream', () => {
  let up: FakeUpstream;
  let t: TestGateway;
  beforeAll(async () => {
    up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
    t = await startTestGateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: 'sk-upstream-secret-123456789' }] });
  });
  afterAll(async () => {
    await t.close();
    await up.close();
  });

  it('non-stream', async () => {
    const r = await t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi there' }] });
    expect(r.choices[0].message.content).toBe('Echo: hi there');
    expect(up.requests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream-secret-123456789');
  });

  it('stream', async () => {
    const s = await t.client().chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi there' }] });
    let text = '';
    for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Echo: hi there');
  });
});
