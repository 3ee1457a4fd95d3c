/**
 * `POST /v1/completions` (legacy) through the real gateway with the official `openai` SDK: JSON and
 * SSE (`object: "text_completion"` chunks, usage asked upstream and shown only on request, `[DONE]`,
 * an error event after the first byte), failover, OpenAI-shaped 400s, providers that do not serve
 * the endpoint, and the audit rows.
 */
import OpenAI from 'openai';
import type { Completion } from 'openai/resources/completions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { ExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { auditRow, apiError } from '../support/call-checks.ts';

const MODEL = 'gpt-3.5-turbo-instruct';
const ALPHA_SECRET = 'sk-alpha-upstream-0123456789abcdef';
const BETA_SECRET = 'sk-beta-upstream-0123456789abcdef';



interface Rig {
  t: TestGateway;
  alpha: ExtraUpstream;
  beta: ExtraUpstream;
}

async function rig(): Promise<Rig> {
  const alpha = await startOpenAIExtraUpstream({ models: [MODEL] });
  const beta = await startOpenAIExtraUpstream({ models: [MODEL] });
  const t = await startTestGateway({
    providers: [
      { name: 'alpha', type: 'openai', baseUrl: alpha.url, secret: ALPHA_SECRET, models: [MODEL], priority: 10 },
      { name: 'beta', type: 'openai-compatible', baseUrl: beta.url, secret: BETA_SECRET, models: [MODEL], priority: 20 },
    ],
    keys: [{ name: 'test' }, { name: 'chat-only', models: ['gpt-4o'] }],
  });
  return { t, alpha, beta };
}

async function closeRig(r: Rig): Promise<void> {
  await r.t.close();
  await r.alpha.close();
  await r.beta.close();
}

describe('legacy completions', () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig();
  });
  afterAll(() => closeRig(r));

  it('non-stream: passes the body through, adds cost and gateway headers, writes the audit row', async () => {
    const { data, response } = await r.t
      .client()
      .completions.create({ model: MODEL, prompt: 'Say this is a test', max_tokens: 7, temperature: 0, user: 'end-user-1' })
      .withResponse();
    expect(data.object).toBe('text_completion');
    expect(data.choices[0].text).toBe('Echo: Say this is a test');
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 });
    const cost = (data.usage as unknown as { cost: number }).cost;
    // $1.5 / $2 per million tokens.
    expect(cost).toBeCloseTo((5 * 1.5 + 6 * 2) / 1e6, 12);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-gateway-provider')).toBe('alpha');
    expect(response.headers.get('x-gateway-model')).toBe(MODEL);
    expect(response.headers.get('x-gateway-attempts')).toBe('1');
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeCloseTo(cost, 12);
    expect(response.headers.get('x-gateway-cost-usd')).not.toMatch(/e/i);

    const sent = r.alpha.requests.at(-1);
    expect(sent?.path).toBe('/v1/completions');
    expect(sent?.headers.authorization).toBe(`Bearer ${ALPHA_SECRET}`);
    expect(sent?.body).toEqual({ model: MODEL, prompt: 'Say this is a test', max_tokens: 7, temperature: 0 });

    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({
      endpoint: '/v1/completions',
      modelRequested: MODEL,
      model: MODEL,
      provider: 'alpha',
      status: 200,
      stream: false,
      inputTokens: 5,
      outputTokens: 6,
      pricing: 'priced',
      attempts: 1,
    });
    expect(row.costUsd).toBeCloseTo(cost, 12);
    expect(row.requestBody).not.toContain(ALPHA_SECRET);
  });

  it('array prompts give one choice each', async () => {
    const res = await r.t.client().completions.create({ model: MODEL, prompt: ['one two', 'three'] });
    expect(res.choices.map((c) => c.text)).toEqual(['Echo: one two', 'Echo: three']);
  });

  it('stream: text_completion chunks, usage asked upstream but not shown unasked, [DONE]', async () => {
    const { data: stream, response } = await r.t.client().completions.create({ model: MODEL, prompt: 'hi there', stream: true }).withResponse();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-gateway-provider')).toBe('alpha');
    const chunks: Completion[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe('Echo: hi there');
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks.at(-1)?.choices[0].finish_reason).toBe('stop');
    expect(r.alpha.requests.at(-1)?.body).toMatchObject({ model: MODEL, stream: true, stream_options: { include_usage: true } });

    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: '/v1/completions', stream: true, inputTokens: 2, outputTokens: 3, pricing: 'priced', status: 200 });
    expect(row.costUsd).toBeGreaterThan(0);
    expect(row.ttftMs).not.toBeNull();
  });

  it('stream wire format: data lines only, ending with [DONE]', async () => {
    const res = await fetch(`${r.t.baseUrl}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${r.t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: 'a b', stream: true }),
    });
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(events[0].slice(6))).toMatchObject({ object: 'text_completion', choices: [{ text: 'Echo: ', index: 0, finish_reason: null }] });
  });

  it('stream with include_usage: the usage chunk carries the cost', async () => {
    r.alpha.options.usageOnEveryChunk = true;
    try {
      const stream = await r.t.client().completions.create({ model: MODEL, prompt: 'hi there', stream: true, stream_options: { include_usage: true } });
      const chunks: Completion[] = [];
      for await (const c of stream) chunks.push(c);
      const withUsage = chunks.filter((c) => c.usage);
      expect(withUsage).toHaveLength(1);
      const last = chunks.at(-1) as Completion;
      expect(last.choices).toEqual([]);
      expect(last.object).toBe('text_completion');
      expect(last.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
      expect((last.usage as unknown as { cost: number }).cost).toBeCloseTo((2 * 1.5 + 3 * 2) / 1e6, 12);
      // `usage: null` that the upstream put on content chunks is removed.
      expect(chunks.slice(0, -1).every((c) => !('usage' in c))).toBe(true);
    } finally {
      r.alpha.options.usageOnEveryChunk = undefined;
    }
  });

  it('stream without upstream usage: an estimated usage chunk of type text_completion', async () => {
    r.alpha.options.omitUsage = true;
    try {
      const { data: stream, response } = await r.t
        .client()
        .completions.create({ model: MODEL, prompt: 'hi there', stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const chunks: Completion[] = [];
      for await (const c of stream) chunks.push(c);
      const last = chunks.at(-1) as Completion;
      expect(last.object).toBe('text_completion');
      expect(last.choices).toEqual([]);
      expect(last.usage?.completion_tokens).toBeGreaterThan(0);
      const row = await auditRow(r.t, response.headers.get('x-request-id'));
      expect(row.pricing).toBe('estimated');
    } finally {
      r.alpha.options.omitUsage = undefined;
    }
  });

  it('an error after the first byte ends the stream with an error event the SDK raises', async () => {
    r.alpha.queueFault({ kind: 'reset-after-chunks', chunks: 2 });
    const { data: stream, response } = await r.t.client().completions.create({ model: MODEL, prompt: 'one two three four', stream: true }).withResponse();
    let text = '';
    const err = await apiError(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.text ?? '';
      })(),
    );
    expect(text).toBe('Echo: one ');
    expect(err.message).toMatch(/alpha/);
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row.status).toBe(502);
    expect(row.errorType).toBe('api_error');
  });

  it('400s name the missing parameter', async () => {
    const client = r.t.client();
    const noPrompt = await apiError(client.completions.create({ model: MODEL } as unknown as OpenAI.CompletionCreateParamsNonStreaming));
    expect(noPrompt.status).toBe(400);
    expect(noPrompt.param).toBe('prompt');
    expect(noPrompt.code).toBe('missing_parameter');
    expect(noPrompt.type).toBe('invalid_request_error');
    const noModel = await apiError(client.completions.create({ prompt: 'hi' } as unknown as OpenAI.CompletionCreateParamsNonStreaming));
    expect(noModel.status).toBe(400);
    expect(noModel.param).toBe('model');
    const badPrompt = await apiError(client.completions.create({ model: MODEL, prompt: { a: 1 } } as unknown as OpenAI.CompletionCreateParamsNonStreaming));
    expect(badPrompt.param).toBe('prompt');
    expect(badPrompt.code).toBe('invalid_type');
  });

  it("honours the key's model allow-list and says when no provider serves the model", async () => {
    const denied = await apiError(r.t.client({ apiKey: r.t.keys['chat-only'] }).completions.create({ model: MODEL, prompt: 'hi' }));
    expect(denied.status).toBe(403);
    expect(denied.code).toBe('model_not_allowed');
    const unknown = await apiError(r.t.client().completions.create({ model: 'davinci-002', prompt: 'hi' }));
    expect(unknown.status).toBe(404);
    expect(unknown.code).toBe('model_not_found');
  });

  it('needs a valid local key', async () => {
    const err = await apiError(r.t.client({ apiKey: 'sk-gw-wrong' }).completions.create({ model: MODEL, prompt: 'hi' }));
    expect(err.status).toBe(401);
  });
});

describe('legacy completions failover', () => {
  let r: Rig;
  afterEach(async () => {
    if (r) await closeRig(r);
  });

  it('non-stream: first provider 500, the second answers; both attempts are recorded', async () => {
    r = await rig();
    r.alpha.queueFault({ kind: 'status', status: 500 });
    const { data, response } = await r.t.client().completions.create({ model: MODEL, prompt: 'hello' }).withResponse();
    expect(data.choices[0].text).toBe('Echo: hello');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    expect(r.beta.requests.at(-1)?.headers.authorization).toBe(`Bearer ${BETA_SECRET}`);
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row.provider).toBe('beta');
    expect(row.attempts).toBe(2);
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', 500],
      ['beta', 200],
    ]);
  });

  it('stream: first provider 500 before any byte, the stream comes from the second', async () => {
    r = await rig();
    r.alpha.queueFault({ kind: 'status', status: 503 });
    const { data: stream, response } = await r.t.client().completions.create({ model: MODEL, prompt: 'hello', stream: true }).withResponse();
    let text = '';
    for await (const c of stream) text += c.choices[0]?.text ?? '';
    expect(text).toBe('Echo: hello');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row.attemptList.map((a) => a.provider)).toEqual(['alpha', 'beta']);
    expect(row.stream).toBe(true);
  });

  it('an upstream that refuses stream_options is retried once without it, and remembered', async () => {
    r = await rig();
    r.alpha.options.rejectStreamOptions = true;
    for (let i = 0; i < 2; i++) {
      const { data: stream, response } = await r.t.client().completions.create({ model: MODEL, prompt: 'hello', stream: true }).withResponse();
      let text = '';
      for await (const c of stream) text += c.choices[0]?.text ?? '';
      expect(text).toBe('Echo: hello');
      expect(response.headers.get('x-gateway-provider')).toBe('alpha');
      const row = await auditRow(r.t, response.headers.get('x-request-id'));
      expect(row.pricing).toBe('estimated');
    }
    // First call: refused, then retried without; second call: sent without stream_options at once.
    expect(r.alpha.requests.filter((q) => q.method === 'POST').map((q) => 'stream_options' in (q.body as object))).toEqual([true, false, false]);
  });

  it('every provider failing is a 502 naming each attempt, with x-should-retry: false', async () => {
    r = await rig();
    r.alpha.setDefaultFault({ kind: 'status', status: 500 });
    r.beta.setDefaultFault({ kind: 'status', status: 500 });
    const err = await apiError(r.t.client().completions.create({ model: MODEL, prompt: 'hello' }));
    expect(err.status).toBe(502);
    expect(err.message).toMatch(/alpha/);
    expect(err.message).toMatch(/beta/);
    expect(err.headers?.get('x-should-retry')).toBe('false');
  });
});

describe('providers that do not serve legacy completions', () => {
  it('the demo provider: a 400 saying it does not serve /v1/completions', async () => {
    const t = await startTestGateway({ demo: true });
    try {
      const { response } = await t.client().chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'x' }] }).withResponse();
      expect(response.status).toBe(200);
      const err = await apiError(t.client().completions.create({ model: 'demo-chat', prompt: 'hi' }));
      expect(err.status).toBe(400);
      expect(err.code).toBe('unsupported_endpoint');
      expect(err.message).toMatch(/does not serve \/v1\/completions/);
      const row = await auditRow(t, err.requestID);
      expect(row).toMatchObject({ endpoint: '/v1/completions', status: 400, modelRequested: 'demo-chat' });
    } finally {
      await t.close();
    }
  });
});
