/**
 * DESIGN's streaming rules against a real gateway: headers held until the first good upstream event
 * (so a stream can fail over), an error after the first byte ends the stream with an `error` event
 * and no `[DONE]`, usage normalisation (usage on content chunks removed, usage on the finish chunk
 * lifted into its own chunk, an estimate when none arrives), an upstream that refuses
 * `stream_options` retried once without and remembered, and a client that hangs up mid-stream
 * ending the upstream request (audit: 499 client_closed).
 */
import { APIError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getCall, listCalls } from '../../core/storage/audit-queries.ts';
import type { StoredCall } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

type JsonObject = Record<string, unknown>;

let upA: FakeUpstream; // first choice for `dual-model`
let upB: FakeUpstream; // second choice for `dual-model`
let upS: FakeUpstream; // the only provider of gpt-4o-mini
let upP: FakeUpstream; // refuses stream_options
let t: TestGateway;

beforeAll(async () => {
  [upA, upB, upS, upP] = await Promise.all([
    startOpenAIUpstream({ models: ['dual-model'] }),
    startOpenAIUpstream({ models: ['dual-model'] }),
    startOpenAIUpstream({ models: ['gpt-4o-mini'] }),
    startOpenAIUpstream({ models: ['picky-model'], rejectStreamOptions: true }),
  ]);
  t = await startTestGateway({
    providers: [
      { name: 'pa', type: 'openai-compatible', baseUrl: upA.url, models: ['dual-model'], priority: 10 },
      { name: 'pb', type: 'openai-compatible', baseUrl: upB.url, models: ['dual-model'], priority: 20 },
      { name: 'solo', type: 'openai', baseUrl: upS.url, models: ['gpt-4o-mini'], secret: 'sk-solo-upstream-key-0123456789' },
      { name: 'picky', type: 'openai-compatible', baseUrl: upP.url, models: ['picky-model'] },
    ],
    // Faults are scripted here; keep the breaker out of the way.
    settings: { routing: { strategy: 'priority', maxAttempts: 4, breakerFailures: 1000, breakerCooldownMs: 1000 } },
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([upA, upB, upS, upP].map((u) => u?.close()));
});
beforeEach(() => {
  for (const u of [upA, upB, upS]) {
    u.options.usageOnEveryChunk = false;
    u.options.usageOnFinishChunk = false;
    u.options.omitUsage = false;
    u.setDefaultFault(null);
  }
});

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

/** A raw streaming POST, returning the SSE data payloads in order (and the raw text). */
async function rawStream(body: JsonObject): Promise<{ status: number; headers: Headers; text: string; events: string[] }> {
  const res = await fetch(`${t.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ stream: true, ...body }),
  });
  const text = await res.text();
  const events = text
    .split('\n\n')
    .filter((b) => b.trim() !== '')
    .map((b) => {
      const lines = b.split('\n');
      expect(lines.some((l) => l.startsWith('event:'))).toBe(false);
      return lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    });
  return { status: res.status, headers: res.headers, text, events };
}

async function auditRow(id: string, deadlineMs = 5_000): Promise<StoredCall> {
  const until = Date.now() + deadlineMs;
  const store = t.openStore();
  try {
    for (;;) {
      t.flush();
      const row = getCall(store.db, id);
      if (row) return row;
      if (Date.now() > until) throw new Error(`no audit row for ${id}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    store.close();
  }
}

describe('headers are held until the first good upstream event', () => {
  it('a 500 from the first provider fails over: one clean stream from the second, x-gateway-attempts: 2', async () => {
    const aBefore = upA.requests.length;
    const bBefore = upB.requests.length;
    upA.queueFault({ kind: 'status', status: 500 });
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'dual-model', stream: true, messages: [{ role: 'user', content: 'fail over please' }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    expect(response.headers.get('x-gateway-provider')).toBe('pb');
    const chunks = await collect(data);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.filter((c) => c.choices[0]?.delta.role).length).toBe(1);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: fail over please');
    expect(upA.requests.length - aBefore).toBe(1);
    expect(upB.requests.length - bBefore).toBe(1);

    const row = await auditRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 200, provider: 'pb', attempts: 2, stream: true });
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['pa', 500],
      ['pb', 200],
    ]);
  });

  it('an upstream that sends 200 headers and then closes before any chunk also fails over', async () => {
    upA.queueFault({ kind: 'reset-after-chunks', chunks: 0 });
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'dual-model', stream: true, messages: [{ role: 'user', content: 'empty first' }] })
      .withResponse();
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    const chunks = await collect(data);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: empty first');
  });

  it('a malformed first event fails over too', async () => {
    upA.queueFault({ kind: 'malformed' });
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'dual-model', stream: true, messages: [{ role: 'user', content: 'garbage first' }] })
      .withResponse();
    expect(response.headers.get('x-gateway-provider')).toBe('pb');
    const chunks = await collect(data);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: garbage first');
  });
});

describe('an error after the first byte', () => {
  it('ends the stream with data: {"error":...}, no event: line and no [DONE] (raw fetch)', async () => {
    upS.queueFault({ kind: 'reset-after-chunks', chunks: 2 });
    const r = await rawStream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four five six' }] });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.text).not.toContain('[DONE]');
    expect(r.events.length).toBeGreaterThanOrEqual(2);
    const last = JSON.parse(r.events.at(-1)!) as { error?: { message: string; type: string; param: unknown; code: string } };
    expect(last.error).toBeDefined();
    expect(last.error).toMatchObject({ type: 'api_error', param: null });
    expect(last.error!.message).toContain('solo');
    expect(r.text).toMatch(/\n\ndata: \{"error":/);
    // Everything before the error was real content.
    const before = r.events.slice(0, -1).map((e) => JSON.parse(e) as ChatCompletionChunk);
    expect(before[0].choices[0].delta.role).toBe('assistant');

    const row = await auditRow(r.headers.get('x-request-id')!);
    expect(row.status).toBeGreaterThanOrEqual(500);
    expect(row.errorType).toBe('api_error');
    expect(row.provider).toBe('solo');
  });

  it('makes the SDK iteration throw an APIError', async () => {
    upS.queueFault({ kind: 'reset-after-chunks', chunks: 3 });
    const stream = await t.client().chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one two three four five six' }] });
    const seen: ChatCompletionChunk[] = [];
    let caught: unknown;
    try {
      for await (const c of stream) seen.push(c);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(APIError);
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen[0].choices[0].delta.role).toBe('assistant');
  });
});

describe('usage normalisation', () => {
  it('removes usage the upstream put on content chunks (usageOnEveryChunk), client not asking', async () => {
    upS.options.usageOnEveryChunk = true;
    const r = await rawStream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a b c' }] });
    expect(r.events.at(-1)).toBe('[DONE]');
    const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e) as JsonObject);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c).not.toHaveProperty('usage');
    expect(chunks.some((c) => (c.choices as unknown[]).length === 0)).toBe(false);
    // The upstream really did put usage on its chunks (so the test means something).
    expect((upS.requests.at(-1)?.body as JsonObject).stream_options).toEqual({ include_usage: true });
  });

  it('removes usage on content chunks and keeps one usage chunk when the client asks', async () => {
    upS.options.usageOnEveryChunk = true;
    const r = await rawStream({ model: 'gpt-4o-mini', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'a b c' }] });
    const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e) as JsonObject);
    const withChoices = chunks.filter((c) => (c.choices as unknown[]).length > 0);
    for (const c of withChoices) expect(c).not.toHaveProperty('usage');
    const usageChunks = chunks.filter((c) => c.usage);
    expect(usageChunks).toHaveLength(1);
    expect(chunks.at(-1)).toBe(usageChunks[0]);
    expect(usageChunks[0].choices).toEqual([]);
    // prompt: 3 words + 3; completion: "Echo: a b c" = 4
    expect(usageChunks[0].usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
  });

  it('lifts usage from the finish chunk into a separate usage chunk (usageOnFinishChunk)', async () => {
    upS.options.usageOnFinishChunk = true;
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'a b c' }] })
      .withResponse();
    const chunks = await collect(data);
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].usage ?? null).toBeNull();
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect(last.id).toBe(chunks[0].id);
    const row = await auditRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ inputTokens: 6, outputTokens: 4, pricing: 'priced' });
  });

  it('usage on the finish chunk is dropped entirely when the client did not ask', async () => {
    upS.options.usageOnFinishChunk = true;
    const r = await rawStream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a b c' }] });
    const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e) as JsonObject);
    for (const c of chunks) expect(c).not.toHaveProperty('usage');
    const row = await auditRow(r.headers.get('x-request-id')!);
    expect(row).toMatchObject({ inputTokens: 6, outputTokens: 4, pricing: 'priced' });
  });

  it('an upstream that never reports usage yields an estimated usage chunk and an `estimated` audit row', async () => {
    upS.options.omitUsage = true;
    const { data, response } = await t
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'estimate my tokens please' }] })
      .withResponse();
    const chunks = await collect(data);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    const row = await auditRow(response.headers.get('x-request-id')!);
    expect(row.pricing).toBe('estimated');
    expect(row.inputTokens).toBe(last.usage!.prompt_tokens);
    expect(row.outputTokens).toBe(last.usage!.completion_tokens);
    expect(row.costUsd).toBeGreaterThan(0);
  });
});

describe('an upstream that rejects stream_options', () => {
  it('is retried once without it, and remembered for the next call', async () => {
    const first = await t.client().chat.completions.create({ model: 'picky-model', stream: true, messages: [{ role: 'user', content: 'picky one' }] });
    const chunks = await collect(first);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: picky one');
    expect(upP.requests).toHaveLength(2);
    expect(upP.requests[0].body).toHaveProperty('stream_options');
    expect(upP.requests[1].body).not.toHaveProperty('stream_options');

    const second = await t
      .client()
      .chat.completions.create({ model: 'picky-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'picky two' }] })
      .withResponse();
    const chunks2 = await collect(second.data);
    expect(chunks2.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: picky two');
    expect(upP.requests).toHaveLength(3);
    expect(upP.requests[2].body).not.toHaveProperty('stream_options');
    // No usage from upstream: the client still gets an (estimated) usage chunk.
    expect(chunks2.at(-1)!.choices).toEqual([]);
    expect(chunks2.at(-1)!.usage!.total_tokens).toBeGreaterThan(0);
    const row = await auditRow(second.response.headers.get('x-request-id')!);
    expect(row.status).toBe(200);
  });
});

describe('a client that disconnects mid-stream', () => {
  it('ends the upstream request and is audited as 499 client_closed', async () => {
    upS.queueFault({ kind: 'slow-stream', gapMs: 300 });
    const n = upS.requests.length + 1;
    const abort = new AbortController();
    const { data, response } = await t
      .client()
      .chat.completions.create(
        { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one two three four five six seven eight' }] },
        { signal: abort.signal },
      )
      .withResponse();
    const id = response.headers.get('x-request-id')!;
    let got = 0;
    try {
      for await (const c of data) {
        got++;
        expect(c.choices[0].delta.role).toBe('assistant');
        abort.abort();
        break;
      }
    } catch {
      /* aborting may surface as an error from the iterator */
    }
    expect(got).toBe(1);
    await upS.waitForRequests(n, 5_000);
    expect(upS.requests[n - 1].aborted).toBe(true);
    const row = await auditRow(id);
    expect(row.status).toBe(499);
    expect(row.errorType).toBe('client_closed');
    expect(row.provider).toBe('solo');
    // The prompt was sent and a chunk delivered: the cut-short call is billed (estimated), not free.
    expect(row.inputTokens).toBeGreaterThan(0);
    expect(row.pricing).toBe('estimated');
    expect(row.costUsd).toBeGreaterThan(0);
  });

  it('also before the first upstream byte of a stream', async () => {
    upS.queueFault({ kind: 'delay', ms: 3_000 });
    const n = upS.requests.length + 1;
    const abort = new AbortController();
    const pending = t
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'never mind' }] }, { signal: abort.signal });
    await waitUntil(() => upS.requests.length >= n);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await upS.waitForRequests(n, 5_000);
    expect(upS.requests[n - 1].aborted).toBe(true);
    const row = await lastRowFor('never mind');
    expect(row).toMatchObject({ status: 499, errorType: 'client_closed', stream: true });
    // The provider had the request: the row names it and the key pays the prompt, estimated.
    expect(row).toMatchObject({ provider: 'solo', model: 'gpt-4o-mini', attempts: 1, pricing: 'estimated', outputTokens: 0 });
    expect(row.inputTokens).toBeGreaterThan(0);
    expect(row.costUsd).toBeGreaterThan(0);
  });

  it('and for a non-stream call', async () => {
    upS.queueFault({ kind: 'hang' });
    const n = upS.requests.length + 1;
    const abort = new AbortController();
    const pending = t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'forget it' }] }, { signal: abort.signal });
    await waitUntil(() => upS.requests.length >= n);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await upS.waitForRequests(n, 5_000);
    expect(upS.requests[n - 1].aborted).toBe(true);
    const row = await lastRowFor('forget it');
    expect(row).toMatchObject({ status: 499, errorType: 'client_closed', stream: false });
    expect(row).toMatchObject({ provider: 'solo', model: 'gpt-4o-mini', attempts: 1, pricing: 'estimated', outputTokens: 0 });
    expect(row.inputTokens).toBeGreaterThan(0);
    expect(row.costUsd).toBeGreaterThan(0);
  });
});

async function waitUntil(cond: () => boolean, deadlineMs = 5_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The newest audit row whose request body contains `text` (the client never saw an x-request-id). */
async function lastRowFor(text: string, deadlineMs = 5_000): Promise<StoredCall> {
  const until = Date.now() + deadlineMs;
  const store = t.openStore();
  try {
    for (;;) {
      t.flush();
      for (const c of listCalls(store.db, { limit: 20 })) {
        const full = getCall(store.db, c.id);
        if (full?.requestBody?.includes(text)) return full;
      }
      if (Date.now() > until) throw new Error(`no audit row for a request with ${text}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    store.close();
  }
}
