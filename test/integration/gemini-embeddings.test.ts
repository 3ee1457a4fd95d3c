/**
 * Embeddings through the gateway to Gemini (`batchEmbedContents`): float vectors and base64 (the
 * official Node SDK asks for base64 by default and decodes it unconditionally), batches in order,
 * `dimensions` → `outputDimensionality`, usage (Gemini reports none here, so it is an estimate and
 * priced `estimated`), and the inputs Gemini cannot take.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { fakeEmbedding } from '../fakes/scenario.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

type Obj = Record<string, unknown>;

const KEY = 'AIzaEmbeddingsKey0123456789abcdef';
const MODEL = 'gemini-embedding-001';

let ge: FakeUpstream;
let t: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  ge = await startGeminiUpstream({ requireKey: KEY });
  // No fixed list: the model comes from Gemini's own listing (embedContent models included).
  t = await startTestGateway({ providers: [{ name: 'gem', type: 'gemini', baseUrl: ge.url, secret: KEY }] });
  client = t.client();
});
afterAll(async () => {
  await t?.close();
  await ge?.close();
});

async function post(body: Obj): Promise<{ status: number; json: Obj; headers: Headers }> {
  const res = await fetch(`${t.baseUrl}/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Obj, headers: res.headers };
}

const lastUpstream = () => ge.requests.at(-1)!;

describe('Gemini embeddings through the gateway', () => {
  it('the embedding model is discovered from the Gemini model list', async () => {
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toContain(MODEL);
    expect(ids).toContain('gemini-2.5-flash');
  });

  it('Node SDK default (base64 on the wire, decoded by the SDK): the exact vectors, in order', async () => {
    const { data, response } = await client.embeddings.create({ model: MODEL, input: ['first text', 'second one here'] }).withResponse();
    expect(data.object).toBe('list');
    expect(data.data.map((d) => d.index)).toEqual([0, 1]);
    expect(data.data.map((d) => d.embedding)).toEqual([fakeEmbedding('first text'), fakeEmbedding('second one here')]);
    expect(data.model).toBe(MODEL);
    // Gemini reports no usage for batchEmbedContents: the gateway counts words (2 + 3) and says it estimated.
    expect(data.usage).toMatchObject({ prompt_tokens: 5, total_tokens: 5 });
    expect(response.headers.get('x-gateway-provider')).toBe('gem');
    expect(response.headers.get('x-gateway-pricing')).toBe('estimated');
    // $0.15 per Mtok: 5 × 0.15 = 0.75 µ$
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.00000075');

    const up = lastUpstream();
    expect(up.path).toBe(`/v1beta/models/${MODEL}:batchEmbedContents`);
    expect(up.headers['x-goog-api-key']).toBe(KEY);
    expect(up.body).toEqual({
      requests: [
        { model: `models/${MODEL}`, content: { parts: [{ text: 'first text' }] } },
        { model: `models/${MODEL}`, content: { parts: [{ text: 'second one here' }] } },
      ],
    });

    t.flush();
    const store = t.openStore();
    try {
      const row = getCall(store.db, response.headers.get('x-request-id')!)!;
      expect(row).toMatchObject({ status: 200, provider: 'gem', model: MODEL, inputTokens: 5, outputTokens: 0, pricing: 'estimated' });
      expect(row.costUsd).toBeCloseTo(0.00000075, 14);
    } finally {
      store.close();
    }
  });

  it('base64 on the wire is little-endian float32 of the same vector', async () => {
    const { status, json } = await post({ model: MODEL, input: 'raw base64', encoding_format: 'base64' });
    expect(status).toBe(200);
    const item = (json.data as Obj[])[0];
    expect(typeof item.embedding).toBe('string');
    const buf = Buffer.from(item.embedding as string, 'base64');
    const decoded = Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4));
    expect(decoded).toEqual(fakeEmbedding('raw base64'));
  });

  it('float, explicitly: a number array', async () => {
    const r = await client.embeddings.create({ model: MODEL, input: 'float please', encoding_format: 'float' });
    expect(r.data).toHaveLength(1);
    expect(r.data[0].embedding).toEqual(fakeEmbedding('float please'));
    const { json } = await post({ model: MODEL, input: 'float please', encoding_format: 'float' });
    expect(Array.isArray((json.data as Obj[])[0].embedding)).toBe(true);
  });

  it('dimensions → outputDimensionality', async () => {
    const r = await client.embeddings.create({ model: MODEL, input: 'short vector', dimensions: 4 });
    expect(r.data[0].embedding).toHaveLength(4);
    expect(r.data[0].embedding).toEqual(fakeEmbedding('short vector', 4));
    const body = lastUpstream().body as { requests: Obj[] };
    expect(body.requests[0].outputDimensionality).toBe(4);
  });

  it('token-array inputs are refused with a 400 the SDK will not retry, without calling Gemini', async () => {
    const before = ge.requests.length;
    const err = await client.embeddings.create({ model: MODEL, input: [[1, 2, 3]] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect((err as { error: Obj }).error.type).toBe('invalid_request_error');
    expect(String((err as { error: Obj }).error.message)).toMatch(/token/i);
    // The adapter's own code and param reach the client.
    expect((err as { error: Obj }).error).toMatchObject({ code: 'unsupported_input', param: 'input' });
    expect(ge.requests.length).toBe(before);
    // Still audited, as the client's mistake.
    t.flush();
    const store = t.openStore();
    try {
      const row = getCall(store.db, (err as { headers: Headers }).headers.get('x-request-id')!)!;
      expect(row).toMatchObject({ status: 400, errorType: 'invalid_request_error', modelRequested: MODEL });
    } finally {
      store.close();
    }
  });

  it('more than 100 inputs is a 400 (Gemini\'s batch limit), without calling Gemini', async () => {
    const before = ge.requests.length;
    const input = Array.from({ length: 101 }, (_, i) => `text ${i}`);
    const { status, json } = await post({ model: MODEL, input });
    expect(status).toBe(400);
    expect(String((json.error as Obj).message)).toMatch(/100/);
    expect(json.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_input', param: 'input' });
    expect(ge.requests.length).toBe(before);
  });

  it('a Gemini error becomes the OpenAI envelope', async () => {
    ge.queueFault({ kind: 'status', status: 400, body: { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' } } });
    const { status, json, headers } = await post({ model: MODEL, input: 'bad' });
    expect(status).toBe(400);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    const e = json.error as Obj;
    expect(e.type).toBe('invalid_request_error');
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toBe('Request contains an invalid argument.');
  });
});
