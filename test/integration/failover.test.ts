/**
 * Failover through the real gateway: every case checks what the official `openai` SDK gets back AND
 * the audit row (each attempt in `attemptList`). Two fake OpenAI upstreams serve the same model;
 * `alpha` goes first (lower priority number), `beta` second.
 */
import { createServer } from 'node:net';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../core/settings.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway, TestProvider } from '../support/gateway-harness.ts';
import { auditRow, apiError } from '../support/call-checks.ts';

const MODEL = 'gpt-4o-mini';
const ALPHA_SECRET = 'sk-alpha-upstream-0123456789abcdef';
const BETA_SECRET = 'sk-beta-upstream-0123456789abcdef';
const messages = [{ role: 'user' as const, content: 'hi there' }];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

interface Rig {
  t: TestGateway;
  alpha: FakeUpstream;
  beta: FakeUpstream;
  client: OpenAI;
}

async function rig(opts: { settings?: Partial<Settings>; alphaUrl?: string; only?: 'alpha' } = {}): Promise<Rig> {
  const alpha = await startOpenAIUpstream({ models: [MODEL] });
  cleanups.push(() => alpha.close());
  const beta = await startOpenAIUpstream({ models: [MODEL] });
  cleanups.push(() => beta.close());
  const providers: TestProvider[] = [
    { name: 'alpha', type: 'openai', baseUrl: opts.alphaUrl ?? alpha.url, secret: ALPHA_SECRET, models: [MODEL], priority: 10 },
  ];
  if (opts.only !== 'alpha') providers.push({ name: 'beta', type: 'openai', baseUrl: beta.url, secret: BETA_SECRET, models: [MODEL], priority: 20 });
  const t = await startTestGateway({ providers, settings: opts.settings });
  cleanups.push(() => t.close());
  return { t, alpha, beta, client: t.client() };
}



async function streamText(stream: AsyncIterable<ChatCompletionChunk>): Promise<string> {
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
  return text;
}

const timeouts = { connectMs: 2_000, firstByteMs: 400, firstByteStreamMs: 400, idleMs: 2_000 };

describe('provider down (connection refused)', () => {
  it('fails over to the next provider and records the refused attempt', async () => {
    const { t, beta, client } = await rig({ alphaUrl: `http://127.0.0.1:${await closedPort()}/v1` });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    expect(beta.requests.at(-1)?.headers.authorization).toBe(`Bearer ${BETA_SECRET}`);

    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, provider: 'beta', model: MODEL, attempts: 2 });
    expect(row.attemptList).toHaveLength(2);
    expect(row.attemptList[0]).toMatchObject({ provider: 'alpha', model: MODEL, status: null });
    expect(row.attemptList[0].error).toMatch(/ECONNREFUSED/);
    expect(row.attemptList[1]).toMatchObject({ provider: 'beta', model: MODEL, status: 200, error: null });
  });

  it('a stream fails over too', async () => {
    const { t, client } = await rig({ alphaUrl: `http://127.0.0.1:${await closedPort()}/v1` });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages, stream: true }).withResponse();
    expect(await streamText(data)).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, provider: 'beta', stream: true, attempts: 2 });
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', null],
      ['beta', 200],
    ]);
  });
});

describe('upstream 500', () => {
  it('fails over once, without retrying the failed provider after a success', async () => {
    const { t, alpha, beta, client } = await rig();
    alpha.setDefaultFault({ kind: 'status', status: 500 });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    expect(alpha.requests).toHaveLength(1);
    expect(beta.requests).toHaveLength(1);

    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, provider: 'beta', attempts: 2, errorType: null });
    expect(row.attemptList[0]).toMatchObject({ provider: 'alpha', status: 500 });
    expect(row.attemptList[0].error).toMatch(/HTTP 500/);
    expect(row.attemptList[1]).toMatchObject({ provider: 'beta', status: 200, error: null });
  });

  it('a single provider is retried after the SDKs\' own first wait (0.5 s less jitter), so a short blip is ridden out', async () => {
    const { alpha, client } = await rig({ only: 'alpha' });
    alpha.queueFault({ kind: 'status', status: 500 });
    const started = performance.now();
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    expect(performance.now() - started).toBeGreaterThanOrEqual(375);
  });

  it('a single failing provider is retried a bounded number of times, then one 502', async () => {
    const { t, alpha, client } = await rig({ only: 'alpha' });
    alpha.setDefaultFault({ kind: 'status', status: 500 });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages }));
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_error');
    // One first attempt and one retry (sameProviderRetries = 1), however many attempts are allowed.
    expect(alpha.requests).toHaveLength(2);
    expect(err.headers?.get('x-gateway-attempts')).toBe('2');
    expect(err.headers?.get('x-gateway-provider')).toBe('alpha');
    expect(err.headers?.get('x-gateway-model')).toBe(MODEL);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    const row = await auditRow(t, err.requestID);
    expect(row).toMatchObject({ status: 502, attempts: 2, errorType: 'api_error' });
    expect(row.attemptList.map((a) => a.status)).toEqual([500, 500]);
  });
});

describe('upstream 429 with retry-after', () => {
  it('fails over at once to the next provider', async () => {
    const { t, alpha, beta, client } = await rig();
    alpha.setDefaultFault({ kind: 'status', status: 429, headers: { 'retry-after': '20' } });
    const started = performance.now();
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(alpha.requests).toHaveLength(1);
    expect(beta.requests).toHaveLength(1);
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, provider: 'beta', attempts: 2 });
    expect(row.attemptList[0]).toMatchObject({ provider: 'alpha', status: 429 });
  });

  it('retries the same provider no earlier than its retry-after-ms', async () => {
    const { t, alpha, client } = await rig({ only: 'alpha' });
    alpha.queueFault({ kind: 'status', status: 429, headers: { 'retry-after-ms': '600', 'retry-after': '1' } });
    const started = performance.now();
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    const elapsed = performance.now() - started;
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(elapsed).toBeGreaterThanOrEqual(590);
    expect(alpha.requests).toHaveLength(2);
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.attemptList.map((a) => a.status)).toEqual([429, 200]);
    expect(row.latencyMs).toBeGreaterThanOrEqual(590);
  });

  it('when every provider is rate-limited: one 429 with the smallest retry-after', async () => {
    const { t, alpha, beta, client } = await rig();
    alpha.setDefaultFault({ kind: 'status', status: 429, headers: { 'retry-after': '20' } });
    beta.setDefaultFault({ kind: 'status', status: 429, headers: { 'retry-after': '7' } });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages }));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.headers?.get('retry-after')).toBe('7');
    expect(err.headers?.get('retry-after-ms')).toBe('7000');
    expect(err.headers?.get('x-gateway-attempts')).toBe('2');
    // Both asked for longer than the gateway waits (2 s): neither is retried.
    expect(alpha.requests).toHaveLength(1);
    expect(beta.requests).toHaveLength(1);
    const row = await auditRow(t, err.requestID);
    expect(row).toMatchObject({ status: 429, errorType: 'rate_limit_exceeded', attempts: 2 });
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', 429],
      ['beta', 429],
    ]);
  });
});

describe('a hang past the first-byte timeout', () => {
  it('non-stream: times out and fails over', async () => {
    const { t, alpha, client } = await rig({ settings: { timeouts } });
    alpha.setDefaultFault({ kind: 'hang' });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.attemptList[0]).toMatchObject({ provider: 'alpha', status: null });
    expect(row.attemptList[0].error).toMatch(/first-byte timeout/);
    expect(row.attemptList[0].durationMs).toBeGreaterThanOrEqual(350);
    expect(row.attemptList[1]).toMatchObject({ provider: 'beta', status: 200 });
  });

  it('stream: times out before the first byte and fails over', async () => {
    const { t, alpha, client } = await rig({ settings: { timeouts } });
    alpha.setDefaultFault({ kind: 'hang' });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages, stream: true }).withResponse();
    expect(await streamText(data)).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', null],
      ['beta', 200],
    ]);
  });

  it('every provider hanging gives one 504 that says not to retry', async () => {
    const { t, alpha, beta, client } = await rig({ settings: { timeouts, routing: { strategy: 'priority', maxAttempts: 2, breakerFailures: 3, breakerCooldownMs: 30_000 } } });
    alpha.setDefaultFault({ kind: 'hang' });
    beta.setDefaultFault({ kind: 'hang' });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages }));
    expect(err.status).toBe(504);
    expect(err.code).toBe('upstream_timeout');
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(err.message).toMatch(/alpha/);
    expect(err.message).toMatch(/beta/);
    const row = await auditRow(t, err.requestID);
    expect(row).toMatchObject({ status: 504, attempts: 2 });
  });
});

describe('streams', () => {
  it('a reset after the first chunk ends the stream with an error event and no [DONE]', async () => {
    const { t, alpha, beta, client } = await rig();
    alpha.queueFault({ kind: 'reset-after-chunks', chunks: 2 });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'one two three four five' }], stream: true }).withResponse();
    expect(response.headers.get('x-gateway-provider')).toBe('alpha');
    let text = '';
    let thrown: unknown = null;
    try {
      for await (const c of data) text += c.choices[0]?.delta?.content ?? '';
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(OpenAI.APIError);
    expect((thrown as Error).message).toMatch(/alpha/);
    // The role chunk and the first content piece arrived; the rest never did.
    expect(text).toBe('Echo: ');
    // Past the first byte there is no failover.
    expect(beta.requests).toHaveLength(0);
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 502, provider: 'alpha', errorType: 'api_error', stream: true, attempts: 1 });
    expect(row.attemptList).toEqual([expect.objectContaining({ provider: 'alpha', status: 200 })]);
  });

  it('the raw bytes: the error line is the last thing, no `event:` line, no [DONE]', async () => {
    const { t, alpha } = await rig();
    alpha.queueFault({ kind: 'reset-after-chunks', chunks: 2 });
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, stream: true }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).not.toContain('[DONE]');
    expect(body).not.toMatch(/^event:/m);
    const events = body.split('\n\n').filter((e) => e.trim() !== '');
    const last = JSON.parse(events.at(-1)!.replace(/^data: /, '')) as { error: { type: string; code: string; message: string } };
    expect(last.error.type).toBe('api_error');
    expect(last.error.code).toMatch(/^upstream_/);
    expect(events.length).toBeGreaterThanOrEqual(2);
  });

  it('a stream that dies before its first byte fails over without leaking the failed bytes', async () => {
    const { t, alpha, beta } = await rig();
    alpha.queueFault({ kind: 'malformed' });
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-provider')).toBe('beta');
    expect(res.headers.get('x-gateway-attempts')).toBe('2');
    const body = await res.text();
    expect(body).not.toContain('garbage');
    expect(body.match(/"role":"assistant"/g)).toHaveLength(1);
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const text = body
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => (JSON.parse(e.slice(6)) as ChatCompletionChunk).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('Echo: hi there');
    expect(alpha.requests).toHaveLength(1);
    expect(beta.requests).toHaveLength(1);
    const row = await auditRow(t, res.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, provider: 'beta', attempts: 2 });
    expect(row.attemptList[0].provider).toBe('alpha');
    expect(row.attemptList[0].status).not.toBe(200);
  });

  it('a stream closed before any content (reset after 0 events) fails over with the SDK', async () => {
    const { t, alpha, client } = await rig();
    alpha.queueFault({ kind: 'reset-after-chunks', chunks: 0 });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages, stream: true }).withResponse();
    expect(await streamText(data)).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.attemptList.map((a) => a.provider)).toEqual(['alpha', 'beta']);
  });
});

describe('client errors do not fail over', () => {
  it('an upstream 400 goes straight back to the client', async () => {
    const { t, alpha, beta, client } = await rig();
    alpha.queueFault({ kind: 'status', status: 400 });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.message).toMatch(/Invalid request \(fake\)/);
    expect(err.headers?.get('x-gateway-attempts')).toBe('1');
    expect(err.headers?.get('x-gateway-provider')).toBe('alpha');
    expect(alpha.requests).toHaveLength(1);
    expect(beta.requests).toHaveLength(0);
    const row = await auditRow(t, err.requestID);
    expect(row).toMatchObject({ status: 400, errorType: 'invalid_request_error', attempts: 1 });
    expect(row.attemptList).toEqual([expect.objectContaining({ provider: 'alpha', status: 400 })]);
  });

  it('a stream whose upstream answers 400 gets the 400 too', async () => {
    const { alpha, beta, client } = await rig();
    alpha.queueFault({ kind: 'status', status: 400 });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages, stream: true }));
    expect(err.status).toBe(400);
    expect(beta.requests).toHaveLength(0);
  });
});

describe('upstream 404 (that provider lacks the model, or its address is wrong)', () => {
  it('fails over to another provider of the model, without counting against the first one\'s health', async () => {
    const { t, alpha, client } = await rig();
    alpha.setDefaultFault({ kind: 'status', status: 404 });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(t.gw.deps.breaker.snapshotOf('alpha').consecutiveFailures).toBe(0);
  });

  it('when every provider answers 404, the client gets the 404 as the upstream gave it', async () => {
    const { alpha, beta, client } = await rig();
    alpha.setDefaultFault({ kind: 'status', status: 404 });
    beta.setDefaultFault({ kind: 'status', status: 404 });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages }));
    expect(err.status).toBe(404);
    expect(err.headers?.get('x-gateway-attempts')).toBe('2');
  });
});

describe('upstream 401 (the provider refused its own key)', () => {
  it('fails over; the client never sees a 401', async () => {
    const { t, alpha, client } = await rig();
    alpha.setDefaultFault({ kind: 'status', status: 401 });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: hi there');
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.attemptList[0]).toMatchObject({ provider: 'alpha', status: 401 });
    expect(row.attemptList[0].error).toMatch(/rejected its API key/);
    // The upstream's key hint went through the scrubber, and the gateway's secret never appears.
    expect(JSON.stringify(row)).not.toContain(ALPHA_SECRET);
  });

  it('with no other provider: a 502 naming the provider, not retried', async () => {
    const { t, alpha, client } = await rig({ only: 'alpha' });
    alpha.setDefaultFault({ kind: 'status', status: 401 });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages }));
    expect(err).not.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/alpha/);
    expect(err.message).toMatch(/rejected its API key/);
    expect(alpha.requests).toHaveLength(1);
    const row = await auditRow(t, err.requestID);
    expect(row).toMatchObject({ status: 502, attempts: 1 });
  });
});

describe('all candidates failing', () => {
  it('one 502 naming every attempt, x-should-retry: false, every attempt on the row', async () => {
    const { t, alpha, beta, client } = await rig();
    alpha.setDefaultFault({ kind: 'status', status: 500 });
    beta.setDefaultFault({ kind: 'status', status: 503 });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages }));
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(502);
    expect(err.type).toBe('api_error');
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/alpha: HTTP 500/);
    expect(err.message).toMatch(/beta: HTTP 503/);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(err.headers?.get('content-type')).toMatch(/^application\/json/);
    // Default maxAttempts 4: alpha, beta, then one retry of each.
    expect(err.headers?.get('x-gateway-attempts')).toBe('4');
    expect(alpha.requests).toHaveLength(2);
    expect(beta.requests).toHaveLength(2);
    const row = await auditRow(t, err.requestID);
    expect(row).toMatchObject({ status: 502, errorType: 'api_error', attempts: 4, provider: null });
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', 500],
      ['beta', 503],
      ['alpha', 500],
      ['beta', 503],
    ]);
    expect(row.errorMessage).toMatch(/alpha/);
  });

  it('the same for a stream, before any byte was sent', async () => {
    const { t, alpha, beta, client } = await rig({ settings: { routing: { strategy: 'priority', maxAttempts: 2, breakerFailures: 3, breakerCooldownMs: 30_000 } } });
    alpha.setDefaultFault({ kind: 'status', status: 500 });
    beta.setDefaultFault({ kind: 'reset' });
    const err = await apiError(client.chat.completions.create({ model: MODEL, messages, stream: true }));
    expect(err.status).toBe(502);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(err.headers?.get('x-gateway-attempts')).toBe('2');
    const row = await auditRow(t, err.requestID);
    expect(row).toMatchObject({ status: 502, stream: true, attempts: 2 });
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', 500],
      ['beta', null],
    ]);
  });
});
