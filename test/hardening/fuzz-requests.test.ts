/**
 * Property-based fuzzing of every endpoint with fast-check: 10,000+ generated requests, valid and
 * invalid parameters mixed (each field tagged by how it was generated), against the real gateway and
 * fake upstreams. No 5xx; every error in the OpenAI envelope; a request with a bad parameter is a 400
 * naming one of them and never reaches a provider; a valid one is not refused. The upstreams' request
 * logs are checked by an oracle written independently of the gateway's zod schemas.
 */
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { ExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { upstreamViolations } from './param-oracle.ts';

/** A generated field: its value, and whether the interface allows it. */
interface Field {
  value: unknown;
  bad: boolean;
}
interface Generated {
  method: 'GET' | 'POST';
  path: string;
  contentType?: string;
  body?: string | Buffer;
  /** Params generated invalid (the 400 must name one of them, or a path inside one). */
  bad: string[];
  /** Whether the body itself is malformed (not JSON, not an object, no boundary...). */
  malformed: boolean;
  /** An upstream is expected to be called only when nothing is wrong. */
  endpoint: string;
}

const good = (arb: fc.Arbitrary<unknown>): fc.Arbitrary<Field> => arb.map((value) => ({ value, bad: false }));
const bad = (arb: fc.Arbitrary<unknown>): fc.Arbitrary<Field> => arb.map((value) => ({ value, bad: true }));
/** Mostly valid (or absent), sometimes invalid. */
const param = (ok: fc.Arbitrary<unknown>, ko: fc.Arbitrary<unknown>): fc.Arbitrary<Field | undefined> =>
  fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: good(ok) }, { weight: 1, arbitrary: bad(ko) });

const notNumber = fc.oneof(fc.string({ maxLength: 5 }), fc.boolean(), fc.constant([1]), fc.constant({}));
const num = (min: number, max: number) => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
const rangeParam = (min: number, max: number) =>
  param(num(min, max), fc.oneof(num(max + 0.01, max + 1000), num(min - 1000, min - 0.01), notNumber));
/** Valid values are drawn from [min, max] (small, so answers stay small); invalid ones lie outside [min, limit]. */
const intParam = (min: number, max: number, limit = max) =>
  param(
    fc.integer({ min, max }),
    fc.oneof(
      ...(Number.isFinite(limit) ? [fc.integer({ min: limit + 1, max: limit + 1000 })] : []),
      fc.integer({ min: min - 1000, max: min - 1 }),
      num(min + 0.1, min + 0.9),
      notNumber,
      fc.constant(String(min)),
    ),
  );
const boolParam = param(fc.boolean(), fc.oneof(fc.constant('true'), fc.constant(1), fc.constant([])));
const stopParam = param(
  fc.oneof(fc.string({ maxLength: 4 }), fc.array(fc.string({ maxLength: 4 }), { maxLength: 4 })),
  fc.oneof(fc.array(fc.string(), { minLength: 5, maxLength: 8 }), fc.integer(), fc.constant([1])),
);
const extension = param(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined));

const ROLES = ['system', 'developer', 'user', 'assistant'] as const;
const goodMessage = fc.record({
  role: fc.constantFrom(...ROLES),
  content: fc.oneof(fc.string({ maxLength: 20 }), fc.constant([{ type: 'text', text: 'part' }])),
});
const badMessage = fc.oneof(
  fc.record({ role: fc.constantFrom('hacker', 'root', '', 'USER'), content: fc.constant('x') }),
  fc.record({ role: fc.constant('user'), content: fc.oneof(fc.integer(), fc.constant({ text: 'x' }), fc.constant([{ type: 'text', text: 5 }])) }),
  fc.constant({ content: 'no role' }),
  fc.constant('just a string'),
  fc.constant(null),
);
const messages = fc.oneof(
  { weight: 6, arbitrary: good(fc.array(goodMessage, { minLength: 1, maxLength: 3 })) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.array(goodMessage, { maxLength: 2 }), badMessage).map(([ok, ko]) => ({ value: [...ok, ko], bad: true })),
  },
  { weight: 1, arbitrary: bad(fc.oneof(fc.constant([]), fc.string(), fc.constant({}), fc.integer())) },
);
/** `null` is a missing model where one is required, and the default where it is optional (images). */
const model = (valid: string, optional = false) =>
  fc.oneof(
    { weight: 8, arbitrary: good(optional ? fc.constantFrom(valid, null) : fc.constant(valid)) },
    { weight: 1, arbitrary: bad(fc.oneof(fc.integer(), fc.constant(''), ...(optional ? [] : [fc.constant(null)]), fc.constant('m'.repeat(300)), fc.constant(['gpt']))) },
  );

function jsonRequest(endpoint: string, path: string, fields: Record<string, Field | undefined>): Generated {
  const body: Record<string, unknown> = {};
  const badParams: string[] = [];
  for (const [name, f] of Object.entries(fields)) {
    if (f === undefined || f.value === undefined) continue;
    body[name] = f.value;
    if (f.bad) badParams.push(name);
  }
  return { method: 'POST', path, contentType: 'application/json', body: JSON.stringify(body), bad: badParams, malformed: false, endpoint };
}

const chat = fc
  .record({
    model: model('gpt-4o-mini'),
    messages,
    temperature: rangeParam(0, 2),
    top_p: rangeParam(0, 1),
    frequency_penalty: rangeParam(-2, 2),
    presence_penalty: rangeParam(-2, 2),
    n: intParam(1, 3, 128),
    max_tokens: intParam(1, 40, Infinity),
    max_completion_tokens: intParam(1, 40, Infinity),
    stop: stopParam,
    seed: param(fc.integer(), fc.oneof(num(0.1, 0.9), notNumber)),
    logprobs: boolParam,
    top_logprobs: intParam(0, 20),
    tool_choice: param(fc.constantFrom('none', 'auto'), fc.oneof(fc.constantFrom('maybe', 'always'), fc.integer(), fc.constant({ type: 'function' }))),
    tools: param(
      fc.constant([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }]),
      fc.oneof(fc.constant([{ type: 'function', function: {} }]), fc.constant('tools'), fc.constant([{ type: 'function', function: { name: 5 } }])),
    ),
    response_format: param(
      fc.constantFrom({ type: 'text' }, { type: 'json_object' }),
      fc.oneof(fc.constant({ type: 'yaml' }), fc.constant('json'), fc.constant({ type: 'json_schema', json_schema: { name: 'has space' } })),
    ),
    stream: param(fc.boolean(), fc.constantFrom('yes', 1)),
    x_provider_extension: extension,
  })
  .map((f) => jsonRequest('chat', '/v1/chat/completions', f));

const completions = fc
  .record({
    model: model('gpt-3.5-turbo-instruct'),
    prompt: fc.oneof(
      { weight: 6, arbitrary: good(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 2 }), fc.array(fc.nat(50000), { minLength: 1, maxLength: 4 }))) },
      { weight: 1, arbitrary: bad(fc.oneof(fc.integer(), fc.constant({}), fc.constant([]), fc.constant([[]]), fc.constant([-1]), fc.constant(null))) },
    ),
    temperature: rangeParam(0, 2),
    top_p: rangeParam(0, 1),
    max_tokens: intParam(1, 40, Infinity),
    n: intParam(1, 2, 128),
    logprobs: intParam(0, 5),
    stop: stopParam,
    echo: boolParam,
  })
  .map((f) => jsonRequest('completions', '/v1/completions', f));

const embeddings = fc
  .record({
    model: model('text-embedding-3-small'),
    input: fc.oneof(
      { weight: 6, arbitrary: good(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 }))) },
      { weight: 1, arbitrary: bad(fc.oneof(fc.constant(''), fc.integer(), fc.constant([]), fc.constant({}), fc.constant([null]), fc.constant(null))) },
    ),
    encoding_format: param(fc.constantFrom('float', 'base64'), fc.oneof(fc.constantFrom('int8', 'FLOAT', ''), fc.integer())),
    dimensions: intParam(1, 12, Infinity),
  })
  .map((f) => jsonRequest('embeddings', '/v1/embeddings', f));

const images = fc
  .record({
    model: model('dall-e-2', true),
    prompt: fc.oneof(
      { weight: 6, arbitrary: good(fc.string({ minLength: 1, maxLength: 30 })) },
      { weight: 1, arbitrary: bad(fc.oneof(fc.integer(), fc.constant(''), fc.constant(['a']), fc.constant(null))) },
    ),
    n: intParam(1, 10),
    size: param(fc.constantFrom('1024x1024', 'auto', '256x256'), fc.oneof(fc.constantFrom('big', '1024', 'x'), fc.integer())),
    quality: param(fc.constantFrom('low', 'high', 'auto', 'standard'), fc.constantFrom('ultra', '', 'HD')),
    response_format: param(fc.constantFrom('url', 'b64_json'), fc.constantFrom('png', 'base64')),
  })
  .map((f) => jsonRequest('images', '/v1/images/generations', f));

/** Multipart audio uploads; a duplicated routing field is a bad parameter. */
const audio = fc
  .record({
    route: fc.constantFrom('transcriptions', 'translations'),
    model: model('whisper-1'),
    duplicateModel: fc.boolean(),
    withFile: fc.boolean(),
    temperature: rangeParam(0, 1),
    response_format: param(fc.constantFrom('json', 'text', 'verbose_json'), fc.constantFrom('xml', 'JSON', '')),
    brokenBody: fc.nat(9),
  })
  .map((a): Generated => {
    const boundary = 'fuzzBoundary7MA4YWxk';
    const parts: string[] = [];
    const badParams: string[] = [];
    const field = (name: string, f: Field | undefined) => {
      if (!f || f.value === undefined) return;
      if (typeof f.value !== 'string' && typeof f.value !== 'number') {
        // A form carries strings only; a non-string model is sent as no model at all.
        if (name === 'model') badParams.push('model');
        return;
      }
      parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${String(f.value)}\r\n`);
      if (f.bad) badParams.push(name);
    };
    field('model', a.model);
    if (a.duplicateModel && typeof a.model.value === 'string') {
      field('model', { value: 'whisper-1', bad: true });
      badParams.push('model');
    }
    field('temperature', a.temperature);
    field('response_format', a.response_format);
    if (a.withFile) parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF0000WAVE\r\n`);
    else badParams.push('file');
    let body = `${parts.join('')}--${boundary}--\r\n`;
    const malformed = a.brokenBody === 0;
    if (malformed) body = body.slice(0, Math.floor(body.length / 2));
    return { method: 'POST', path: `/v1/audio/${a.route}`, contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.from(body), bad: badParams, malformed, endpoint: 'audio' };
  });

const plainGets = fc
  .oneof(
    fc.constantFrom('/v1/models', '/v1/models/gpt-4o-mini', '/v1/models/nope/with/slashes', '/v1/balance', '/v1/dashboard/user/info', '/v1/dashboard/billing/subscription'),
    fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })).map(([s, e]) => `/v1/dashboard/billing/usage?start_date=${encodeURIComponent(s)}&end_date=${encodeURIComponent(e)}`),
    fc.string({ maxLength: 30 }).map((s) => `/v1/models/${encodeURIComponent(s)}`),
  )
  .map((path): Generated => ({ method: 'GET', path, bad: [], malformed: false, endpoint: 'get' }));

/** Bodies that are not a JSON object at all: garbage, arrays, deep nesting, wrong content. */
const malformedJson = fc
  .record({
    path: fc.constantFrom('/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/images/generations'),
    body: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(Array.isArray(v) ? v : [v])),
      fc.integer({ min: 130, max: 3000 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`),
      fc.integer({ min: 130, max: 3000 }).map((d) => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"x":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}`),
      fc.constant(''),
      fc.constant('{"model": "gpt-4o-mini", "messages": [}'),
    ),
  })
  .map(({ path, body }): Generated => ({ method: 'POST', path, contentType: 'application/json', body, bad: [], malformed: true, endpoint: 'malformed' }));

const anyRequest = fc.oneof(
  { weight: 4, arbitrary: chat },
  { weight: 2, arbitrary: completions },
  { weight: 2, arbitrary: embeddings },
  { weight: 2, arbitrary: images },
  { weight: 2, arbitrary: audio },
  { weight: 1, arbitrary: plainGets },
  { weight: 1, arbitrary: malformedJson },
);

const BATCH = 20;
const RUNS = 520; // 520 x 20 = 10,400 requests

interface Outcome {
  req: Generated;
  status: number;
  contentType: string;
  text: string;
}

let t: TestGateway;
let chatUp: FakeUpstream;
let extraUp: ExtraUpstream;
const agent = new Agent({ connections: BATCH, keepAliveTimeout: 30_000 });

beforeAll(async () => {
  chatUp = await startOpenAIUpstream({ models: ['gpt-4o-mini', 'text-embedding-3-small'] });
  extraUp = await startOpenAIExtraUpstream();
  t = await startTestGateway({
    providers: [
      { name: 'chatty', type: 'openai', baseUrl: chatUp.url, secret: 'sk-fuzz-chat-0123456789abcdef', models: ['gpt-4o-mini', 'text-embedding-3-small'] },
      { name: 'extra', type: 'openai', baseUrl: extraUp.url, secret: 'sk-fuzz-extra-0123456789abcdef', models: ['gpt-3.5-turbo-instruct', 'gpt-image-1', 'dall-e-2', 'whisper-1'] },
    ],
    keys: [{ name: 'fuzz' }],
    // The fuzzer's own rows are not what is tested; keep the audit cheap.
    settings: { audit: { storeBodies: false, retentionDays: 90, maxRows: 1_000_000 } },
  });
});

afterAll(async () => {
  await agent.close();
  await t?.close();
  await chatUp?.close();
  await extraUp?.close();
});

async function send(req: Generated): Promise<Outcome> {
  const headers: Record<string, string> = { authorization: `Bearer ${t.key}` };
  if (req.contentType) headers['content-type'] = req.contentType;
  const res = await request(`${t.gw.url}${req.path}`, { dispatcher: agent, method: req.method, headers, body: req.body });
  const text = await res.body.text();
  return { req, status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text };
}

/** What is wrong with one answer, or null. */
function problem(o: Outcome): string | null {
  const where = `${o.req.method} ${o.req.path} -> ${o.status} ${o.text.slice(0, 300)} (bad: ${o.req.bad.join(',')}; body ${String(o.req.body ?? '').slice(0, 300)})`;
  if (o.status >= 500) return `5xx: ${where}`;
  if (o.status >= 400) {
    if (!o.contentType.startsWith('application/json')) return `error without JSON: ${where}`;
    let env: { error?: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } };
    try {
      env = JSON.parse(o.text);
    } catch {
      return `error body not JSON: ${where}`;
    }
    const e = env.error;
    if (!e || typeof e.message !== 'string' || typeof e.type !== 'string' || !('param' in e) || !('code' in e)) return `not the OpenAI envelope: ${where}`;
    if (o.req.bad.length > 0 && o.status === 400 && typeof e.param === 'string' && !o.req.malformed) {
      const named = e.param;
      if (!o.req.bad.some((b) => named === b || named.startsWith(`${b}[`) || named.startsWith(`${b}.`))) return `400 names ${named}, not one of the bad params: ${where}`;
    }
  }
  if (o.req.method === 'POST' && !o.req.malformed) {
    if (o.req.bad.length > 0 && o.status < 400) return `bad params accepted: ${where}`;
    if (o.req.bad.length === 0 && o.status >= 400) return `valid request refused: ${where}`;
  }
  if (o.req.malformed && o.status < 400 && o.req.endpoint === 'malformed') return `malformed body accepted: ${where}`;
  return null;
}

describe('fuzzed requests across every endpoint', () => {
  it('no 5xx, every error in the envelope, bad params refused before any provider, valid ones served', { timeout: 180_000 }, async () => {
    let sent = 0;
    const problems: string[] = [];
    const byStatus = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(anyRequest, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const outcomes = await Promise.all(batch.map(send));
        sent += outcomes.length;
        for (const o of outcomes) {
          byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
          const p = problem(o);
          if (p) problems.push(p);
        }
        // Every run goes on: the problems are listed at the end, readable, rather than one huge counterexample.
        return true;
      }),
      { numRuns: RUNS, seed: 20261124 },
    );
    expect(problems.slice(0, 8)).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(10_000);
    // Both kinds really happened: a fuzzer that only produced 400s (or only 200s) would prove little.
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(2000);
    expect(byStatus.get(400) ?? 0).toBeGreaterThan(2000);

    const upstreamBodies = [
      ...chatUp.requests.filter((r) => r.method === 'POST').map((r) => ({ path: r.path, body: r.body })),
      ...extraUp.requests.filter((r) => r.method === 'POST').map((r) => ({ path: r.path, body: r.body })),
    ];
    expect(upstreamBodies.length).toBeGreaterThan(2000);
    expect(upstreamViolations(upstreamBodies).slice(0, 5)).toEqual([]);
  });
});
