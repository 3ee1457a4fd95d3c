/**
 * Every row of DESIGN's error table this slice can meet, through the official SDK (its error class)
 * or a raw fetch where the SDK cannot send the broken request: status, `type`, `code`, `param`, the
 * retry headers, and the audit row each failure leaves.
 */
import OpenAI, {
  APIError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import type { StoredCall } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

// A provider secret no generic pattern would catch: only the gateway's knowledge of it can redact it.
const PLAIN_SECRET = 'plainsecret_QWERTYUIOP123456';
const SK_SECRET = 'sk-errs-upstream-ABCDEFGHIJ0123456789';

let up: FakeUpstream; // gpt-4o-mini via `good`
let upFlaky: FakeUpstream;
let upSlow: FakeUpstream;
let upLocked: FakeUpstream;
let upLeaky: FakeUpstream;
let upBusy: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  [up, upFlaky, upSlow, upLocked, upLeaky, upBusy] = await Promise.all([
    startOpenAIUpstream({ models: ['gpt-4o-mini', 'gpt-4o'] }),
    startOpenAIUpstream({ models: ['flaky-model'] }),
    startOpenAIUpstream({ models: ['slow-model'] }),
    startOpenAIUpstream({ models: ['locked-model'], requireKey: 'sk-the-right-upstream-key-000000' }),
    startOpenAIUpstream({ models: ['leaky-model'] }),
    startOpenAIUpstream({ models: ['busy-model'] }),
  ]);
  t = await startTestGateway({
    providers: [
      { name: 'good', type: 'openai', baseUrl: up.url, models: ['gpt-4o-mini', 'gpt-4o'], secret: SK_SECRET },
      { name: 'flaky', type: 'openai-compatible', baseUrl: upFlaky.url, models: ['flaky-model'] },
      { name: 'slowpoke', type: 'openai-compatible', baseUrl: upSlow.url, models: ['slow-model'] },
      { name: 'locked', type: 'openai-compatible', baseUrl: upLocked.url, models: ['locked-model'], secret: 'sk-wrong-upstream-key-1111111111' },
      { name: 'leaky', type: 'openai-compatible', baseUrl: upLeaky.url, models: ['leaky-model'], secret: PLAIN_SECRET },
      { name: 'busy', type: 'openai-compatible', baseUrl: upBusy.url, models: ['busy-model'] },
    ],
    keys: [
      { name: 'test' },
      { name: 'budgeted', budgetUsd: 0.000005 },
      { name: 'limited', rpm: 2 },
      { name: 'narrow', models: ['gpt-4o'] },
      { name: 'roomy', rpm: 100, tpm: 100_000 },
    ],
    settings: {
      bodyLimitBytes: 4096,
      timeouts: { connectMs: 2_000, firstByteMs: 400, firstByteStreamMs: 400, idleMs: 2_000 },
      routing: { strategy: 'priority', maxAttempts: 4, breakerFailures: 1000, breakerCooldownMs: 1000 },
    },
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([up, upFlaky, upSlow, upLocked, upLeaky, upBusy].map((u) => u?.close()));
});

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function rawPost(path: string, body: string, headers: Record<string, string> = { authorization: `Bearer ${t.key}` }) {
  const res = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  return { res, text, json: JSON.parse(text) as ErrorBody };
}

/** Runs the call and returns the error it threw (failing if it did not). */
async function failure<E extends APIError>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (err) {
    return err as E;
  }
  throw new Error('expected the call to fail');
}

function expectEnvelope(err: APIError, status: number, type: string, code: string | null, param: string | null = null) {
  expect(err.status).toBe(status);
  expect(err.type).toBe(type);
  expect(err.code).toBe(code);
  expect(err.param).toBe(param);
  expect(err.headers?.get('content-type')).toMatch(/^application\/json/);
  expect(err.requestID).toBeTruthy();
  // The SDK got the message out of the envelope (not "status code (no body)").
  expect(err.message).not.toMatch(/no body/);
}

function audit(id: string): StoredCall {
  t.flush();
  const store = t.openStore();
  try {
    const row = getCall(store.db, id);
    if (!row) throw new Error(`no audit row ${id}`);
    return row;
  } finally {
    store.close();
  }
}

const chat = (client: OpenAI, model: string, content = 'hi') => client.chat.completions.create({ model, messages: [{ role: 'user', content }] });

describe('400 invalid_request_error', () => {
  it('invalid_json for a broken body (raw fetch)', async () => {
    const { res, json } = await rawPost('/chat/completions', '{"model": "gpt-4o-mini", "messages": [');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json', param: null });
    expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    const row = audit(res.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 400, errorType: 'invalid_request_error', attempts: 0, provider: null });
  });

  it('missing_parameter names the missing field', async () => {
    const noMessages = await failure<BadRequestError>(t.client().chat.completions.create({ model: 'gpt-4o-mini' } as never));
    expect(noMessages).toBeInstanceOf(BadRequestError);
    expectEnvelope(noMessages, 400, 'invalid_request_error', 'missing_parameter', 'messages');

    const noModel = await failure<BadRequestError>(t.client().chat.completions.create({ messages: [{ role: 'user', content: 'x' }] } as never));
    expect(noModel).toBeInstanceOf(BadRequestError);
    expectEnvelope(noModel, 400, 'invalid_request_error', 'missing_parameter', 'model');
  });

  it('invalid_type names the field of the wrong type', async () => {
    const err = await failure<BadRequestError>(t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: 'hello' } as never));
    expect(err).toBeInstanceOf(BadRequestError);
    expectEnvelope(err, 400, 'invalid_request_error', 'invalid_type', 'messages');

    const model = await failure<BadRequestError>(t.client().chat.completions.create({ model: 42, messages: [{ role: 'user', content: 'x' }] } as never));
    expectEnvelope(model, 400, 'invalid_request_error', 'invalid_type', 'model');
  });

  it('no upstream was contacted for a client mistake', async () => {
    const before = up.requests.length;
    await failure(t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: 'nope' } as never));
    expect(up.requests.length).toBe(before);
  });
});

describe('401 invalid_api_key', () => {
  it('a missing key (raw fetch, no Authorization)', async () => {
    const { res, json } = await rawPost('/chat/completions', JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }), {});
    expect(res.status).toBe(401);
    expect(json.error).toMatchObject({ type: 'invalid_api_key', code: 'invalid_api_key', param: null });
    const row = audit(res.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 401, errorType: 'invalid_api_key', keyId: null });
  });

  it('a wrong key (SDK AuthenticationError), and the key is not echoed whole', async () => {
    const wrong = 'sk-gw-ThisIsNotARealKeyAtAll0123456789';
    const err = await failure<AuthenticationError>(chat(t.client({ apiKey: wrong }), 'gpt-4o-mini'));
    expect(err).toBeInstanceOf(AuthenticationError);
    expectEnvelope(err, 401, 'invalid_api_key', 'invalid_api_key');
    expect(err.message).not.toContain(wrong);
    // No retry mends a wrong key: agents that retry 401s on their own are told so.
    expect(err.headers?.get('x-should-retry')).toBe('false');
  });

  it('GET /v1/models needs a key too', async () => {
    const err = await failure<AuthenticationError>(t.client({ apiKey: 'sk-gw-nope' }).models.list());
    expect(err).toBeInstanceOf(AuthenticationError);
  });
});

describe('402 insufficient_quota', () => {
  it('once the budget is spent, with x-should-retry: false, and nothing is sent upstream', async () => {
    const client = t.client({ apiKey: t.keys.budgeted });
    let ok = 0;
    let err: APIError | undefined;
    for (let i = 0; i < 6 && !err; i++) {
      try {
        // A tiny max_tokens: without one the worst case (the model's whole output limit) would not fit at all.
        await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'spend some money' }], max_tokens: 2 });
        ok++;
      } catch (e) {
        err = e as APIError;
      }
    }
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(err).toBeInstanceOf(APIError);
    expect(err).not.toBeInstanceOf(RateLimitError);
    expectEnvelope(err!, 402, 'insufficient_quota', 'insufficient_quota');
    expect(err!.headers?.get('x-should-retry')).toBe('false');
    expect(err!.message).toContain('budgeted');

    const before = up.requests.length;
    const again = await failure<APIError>(chat(client, 'gpt-4o-mini'));
    expect(again.status).toBe(402);
    expect(up.requests.length).toBe(before);
    const row = audit(again.requestID!);
    expect(row).toMatchObject({ status: 402, errorType: 'insufficient_quota', keyName: 'budgeted' });
  });
});

describe('403 model_not_allowed', () => {
  it('a key limited to other models', async () => {
    const err = await failure<PermissionDeniedError>(chat(t.client({ apiKey: t.keys.narrow }), 'gpt-4o-mini'));
    expect(err).toBeInstanceOf(PermissionDeniedError);
    expectEnvelope(err, 403, 'invalid_request_error', 'model_not_allowed');
    // ... and the allowed one works.
    const ok = await chat(t.client({ apiKey: t.keys.narrow }), 'gpt-4o');
    expect(ok.choices[0].message.content).toBe('Echo: hi');
  });
});

describe('404 model_not_found', () => {
  it('no provider serves the model (NotFoundError), message says what to do', async () => {
    const err = await failure<NotFoundError>(chat(t.client(), 'no-such-model-anywhere'));
    expect(err).toBeInstanceOf(NotFoundError);
    expectEnvelope(err, 404, 'invalid_request_error', 'model_not_found', 'model');
    expect(err.message).toContain('no-such-model-anywhere');
    expect(err.message).toContain('gateway providers');
    const row = audit(err.requestID!);
    expect(row).toMatchObject({ status: 404, modelRequested: 'no-such-model-anywhere', errorType: 'invalid_request_error' });
  });
});

describe('413 request_too_large', () => {
  it('a body over bodyLimitBytes', async () => {
    const err = await failure<APIError>(chat(t.client(), 'gpt-4o-mini', 'x'.repeat(10_000)));
    expectEnvelope(err, 413, 'invalid_request_error', 'request_too_large');
    const row = audit(err.requestID!);
    expect(row.status).toBe(413);
  });

  it('also when the body is chunked (no content-length)', async () => {
    const big = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'y'.repeat(10_000) }] });
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorBody).error.code).toBe('request_too_large');
  });
});

describe('429 rate_limit_exceeded (the key\'s own limit)', () => {
  it('with retry-after and x-ratelimit headers', async () => {
    const client = t.client({ apiKey: t.keys.limited });
    const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'r1' }] }).withResponse();
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(first.response.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?(ms|s|m\d+s)$|^\d+m\d+(\.\d+)?s$/);
    await chat(client, 'gpt-4o-mini', 'r2');
    const before = up.requests.length;
    const err = await failure<RateLimitError>(chat(client, 'gpt-4o-mini', 'r3'));
    expect(err).toBeInstanceOf(RateLimitError);
    expectEnvelope(err, 429, 'rate_limit_exceeded', 'rate_limit_exceeded');
    const retryAfter = Number(err.headers?.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(err.headers?.get('x-ratelimit-limit-requests')).toBe('2');
    expect(err.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(err.headers?.get('x-ratelimit-reset-requests')).toBeTruthy();
    expect(up.requests.length).toBe(before);
  });

  it('rate-limit headers are on every response to a key with limits, streams included', async () => {
    const client = t.client({ apiKey: t.keys.roomy });
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream with limits' }] })
      .withResponse();
    for await (const _ of data) void _;
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('100');
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    expect(Number(response.headers.get('x-ratelimit-remaining-requests'))).toBe(99);
    expect(response.headers.get('x-ratelimit-reset-tokens')).toBeTruthy();
    // An error response to that key carries them too.
    const err = await failure<NotFoundError>(chat(client, 'no-such-model-anywhere'));
    expect(err.status).toBe(404);
    expect(err.headers?.get('x-ratelimit-limit-requests')).toBe('100');
    // And a request refused before admission (a body that is not JSON, a missing field), counting nothing.
    for (const body of ['{bad', JSON.stringify({ model: 'gpt-4o-mini' })]) {
      const bad = await fetch(`${t.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.keys.roomy}`, 'content-type': 'application/json' }, body });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('x-ratelimit-limit-requests')).toBe('100');
      expect(bad.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    }
    // So does a models listing, which shows the state without spending a request.
    const listed = await fetch(`${t.baseUrl}/models`, { headers: { authorization: `Bearer ${t.keys.roomy}` } });
    const remaining = Number(listed.headers.get('x-ratelimit-remaining-requests'));
    expect(listed.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    const again = await fetch(`${t.baseUrl}/models`, { headers: { authorization: `Bearer ${t.keys.roomy}` } });
    expect(Number(again.headers.get('x-ratelimit-remaining-requests'))).toBe(remaining);
  });
});

describe('502 / 504 from the providers', () => {
  it('502 upstream_error naming the provider, x-should-retry: false after 2 attempts', async () => {
    upFlaky.queueFault({ kind: 'status', status: 500 }, { kind: 'status', status: 503 });
    const before = upFlaky.requests.length;
    const err = await failure<InternalServerError>(chat(t.client(), 'flaky-model'));
    expect(err).toBeInstanceOf(InternalServerError);
    expectEnvelope(err, 502, 'api_error', 'upstream_error');
    expect(err.message).toContain('flaky');
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(upFlaky.requests.length - before).toBe(2);
    const row = audit(err.requestID!);
    expect(row).toMatchObject({ status: 502, errorType: 'api_error', attempts: 2 });
    expect(row.attemptList.map((a) => a.status)).toEqual([500, 503]);
  });

  it('504 upstream_timeout when the provider never answers', async () => {
    upSlow.setDefaultFault({ kind: 'hang' });
    try {
      const started = Date.now();
      const err = await failure<InternalServerError>(chat(t.client(), 'slow-model'));
      expect(err).toBeInstanceOf(InternalServerError);
      expectEnvelope(err, 504, 'api_error', 'upstream_timeout');
      expect(err.message).toContain('slowpoke');
      expect(err.headers?.get('x-should-retry')).toBe('false');
      expect(Date.now() - started).toBeLessThan(10_000);
      // The stream flavour times out before any byte, so it is a clean 504 too.
      const s = await failure<APIError>(t.client().chat.completions.create({ model: 'slow-model', stream: true, messages: [{ role: 'user', content: 'x' }] }));
      expect(s.status).toBe(504);
      expect(s.code).toBe('upstream_timeout');
    } finally {
      upSlow.setDefaultFault(null);
    }
  });

  it('an upstream 401 (the provider rejected its key) is a 502 naming the provider, never a 401', async () => {
    const err = await failure<APIError>(chat(t.client(), 'locked-model'));
    expect(err).not.toBeInstanceOf(AuthenticationError);
    expect(err).toBeInstanceOf(InternalServerError);
    expectEnvelope(err, 502, 'api_error', 'upstream_error');
    expect(err.message).toContain('locked');
    expect(err.message).toContain('401');
    expect(err.message).not.toContain('sk-wrong-upstream-key-1111111111');
    // One attempt only (a retry of the same bad key cannot help), and the SDKs are told not to retry either:
    // a key the provider refused needs its owner (Claude Code retried such an answer ten times, for minutes).
    const row = audit(err.requestID!);
    expect(row.attempts).toBe(1);
    expect(err.headers?.get('x-should-retry')).toBe('false');
  });

  it('an upstream 400 goes back as 400 with its message, the provider secret scrubbed', async () => {
    upLeaky.queueFault({
      kind: 'status',
      status: 400,
      body: { error: { message: `Invalid 'temperature' for key ${PLAIN_SECRET} (also ${SK_SECRET}).`, type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
    });
    const err = await failure<BadRequestError>(chat(t.client(), 'leaky-model'));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.message).toContain("Invalid 'temperature'");
    // The provider's own param and code travel with its message.
    expect(err.param).toBe('temperature');
    expect(err.code).toBe('invalid_value');
    expect(err.message).not.toContain(PLAIN_SECRET);
    expect(err.message).not.toContain(SK_SECRET);
    expect(err.message).toContain('[redacted]');
    const row = audit(err.requestID!);
    expect(row.status).toBe(400);
    expect(row.errorMessage).not.toContain(PLAIN_SECRET);
    expect(JSON.stringify(row)).not.toContain(PLAIN_SECRET);
  });

  it('an upstream 400 to a stream request is a plain JSON 400, not a stream', async () => {
    upLeaky.queueFault({
      kind: 'status',
      status: 400,
      body: { error: { message: `Bad 'top_p' (key ${PLAIN_SECRET}).`, type: 'invalid_request_error', param: 'top_p', code: null } },
    });
    const res = await fetch(`${t.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'leaky-model', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as ErrorBody;
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'top_p' });
    expect(body.error.message).toContain("Bad 'top_p'");
    expect(body.error.message).not.toContain(PLAIN_SECRET);
  });

  it('a truncated non-stream body is the provider\'s failure: retried, then 502 naming it', async () => {
    upFlaky.queueFault({ kind: 'reset-after-chunks', chunks: 0 }, { kind: 'malformed' });
    const before = upFlaky.requests.length;
    const err = await failure<InternalServerError>(chat(t.client(), 'flaky-model'));
    expectEnvelope(err, 502, 'api_error', 'upstream_error');
    expect(err.message).toContain('flaky');
    expect(upFlaky.requests.length - before).toBe(2);
    // ... and the next call, with the faults used up, works.
    const ok = await chat(t.client(), 'flaky-model', 'after the storm');
    expect(ok.choices[0].message.content).toBe('Echo: after the storm');
  });

  it('every provider answering 429: a 429 rate_limit_exceeded with the provider\'s retry-after', async () => {
    upBusy.queueFault(
      { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
      { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
    );
    const err = await failure<RateLimitError>(chat(t.client(), 'busy-model'));
    expect(err).toBeInstanceOf(RateLimitError);
    expectEnvelope(err, 429, 'rate_limit_exceeded', 'rate_limit_exceeded');
    expect(err.headers?.get('retry-after')).toBe('1');
    expect(err.message).toContain('busy');
  });

  it("the two wait headers agree, and an absurd upstream wait is capped at a day", async () => {
    try {
      upBusy.setDefaultFault({ kind: 'status', status: 429, headers: { 'retry-after': '0' } });
      const zero = await failure<RateLimitError>(chat(t.client(), 'busy-model'));
      expect([zero.headers?.get('retry-after'), zero.headers?.get('retry-after-ms')]).toEqual(['1', '1000']);
      upBusy.setDefaultFault({ kind: 'status', status: 429, headers: { 'retry-after': '100000000000' } });
      const huge = await failure<RateLimitError>(chat(t.client(), 'busy-model'));
      expect([huge.headers?.get('retry-after'), huge.headers?.get('retry-after-ms')]).toEqual(['86400', '86400000']);
    } finally {
      upBusy.setDefaultFault(null);
    }
  });

  it("a provider out of credit (OpenAI's 429 insufficient_quota) is no rate limit to wait out: a 502 not to retry", async () => {
    const quota = { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } };
    try {
      upBusy.setDefaultFault({ kind: 'status', status: 429, body: quota });
      const err = await failure<APIError>(chat(t.client(), 'busy-model'));
      expect(err.status).toBe(502);
      expect(err.message).toContain('quota');
      expect(err.headers?.get('x-should-retry')).toBe('false');
    } finally {
      upBusy.setDefaultFault(null);
    }
  });
});
