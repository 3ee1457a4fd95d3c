/**
 * Azure OpenAI through the gateway, in both API shapes the adapter speaks:
 * - the v1 API (`/openai/v1/...`, the deployment named in the body's `model`), the default;
 * - the classic deployments API (`/openai/deployments/{dep}/...?api-version=`), when the provider's
 *   options carry `apiVersion`.
 * `options.deployments` maps the model ids clients use to deployment names; auth is `api-key`.
 */
import type OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAzureUpstream } from '../fakes/azure-upstream.ts';
import type { FakeAzure } from '../fakes/azure-upstream.ts';
import { fakeEmbedding } from '../fakes/scenario.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

type Obj = Record<string, unknown>;

const KEY = 'azure-resource-key-0123456789abcdef';
const OLD_KEY = 'azure-old-resource-key-0123456789';
const API_VERSION = '2024-10-21';

let az: FakeAzure;
let old: FakeAzure;
let t: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  az = await startAzureUpstream({
    apiKey: KEY,
    deployments: { 'prod-4o': 'gpt-4o', 'mini-dep': 'gpt-4o-mini', 'embed-dep': 'text-embedding-3-small' },
    apiVersions: [API_VERSION],
  });
  // An older resource: no v1 API, deployments named after their models, model list discovered.
  old = await startAzureUpstream({ apiKey: OLD_KEY, deployments: { 'gpt-4.1': 'gpt-4.1' }, apiVersions: [API_VERSION], v1: false });
  t = await startTestGateway({
    providers: [
      {
        name: 'az-v1',
        type: 'azure',
        // Users paste the endpoint with or without `/openai/v1`.
        baseUrl: `${az.url}/openai/v1`,
        secret: KEY,
        models: ['gpt-4o', 'text-embedding-3-small'],
        options: { deployments: { 'gpt-4o': 'prod-4o', 'text-embedding-3-small': 'embed-dep' } },
      },
      {
        name: 'az-dep',
        type: 'azure',
        baseUrl: az.url,
        secret: KEY,
        models: ['gpt-4o-mini', 'gpt-4o-broken'],
        options: { apiVersion: API_VERSION, deployments: { 'gpt-4o-mini': 'mini-dep', 'gpt-4o-broken': 'no-such-deployment' } },
      },
      { name: 'az-old', type: 'azure', baseUrl: `${old.url}/openai`, secret: OLD_KEY, models: null, options: { apiVersion: API_VERSION } },
      // v1 API, no fixed list: models come from GET /openai/v1/models (tried after az-v1 for shared ids).
      { name: 'az-v1-listed', type: 'azure', baseUrl: az.url, secret: KEY, models: null, priority: 200, options: {} },
      { name: 'az-badkey', type: 'azure', baseUrl: az.url, secret: 'wrong-key', models: ['gpt-4o-badkey'], options: { deployments: { 'gpt-4o-badkey': 'prod-4o' } } },
      { name: 'az-badver', type: 'azure', baseUrl: az.url, secret: KEY, models: ['gpt-4o-badver'], options: { apiVersion: '1999-01-01', deployments: { 'gpt-4o-badver': 'prod-4o' } } },
    ],
  });
  client = t.client();
});
afterAll(async () => {
  await t?.close();
  await Promise.all([az?.close(), old?.close()]);
});

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

async function collect(s: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of s) out.push(c);
  return out;
}

function lastRequest(f: FakeAzure) {
  const r = f.requests.at(-1)!;
  return { ...r, body: r.body as Obj };
}

describe('v1 API (default)', () => {
  it('non-stream: /openai/v1/chat/completions, deployment as model, api-key header, priced', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello azure' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: hello azure');
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(response.headers.get('x-gateway-provider')).toBe('az-v1');
    // gpt-4o at $2.50 / $10: 5×2.5 + 3×10 = 42.5 µ$
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.0000425');
    const req = lastRequest(az);
    expect(req.path).toBe('/openai/v1/chat/completions');
    expect(req.headers['api-key']).toBe(KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body.model).toBe('prod-4o');
  });

  it('stream: Azure\'s leading prompt-filter chunk (choices: []) never reaches the client', async () => {
    const s = await client.chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream from azure' }],
    });
    const chunks = await collect(s);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.filter((c) => c.choices.length === 0)).toHaveLength(1);
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4 });
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: stream from azure');
    const req = lastRequest(az);
    expect(req.path).toBe('/openai/v1/chat/completions');
    expect(req.body.stream_options).toEqual({ include_usage: true });
  });

  it('stream helper: a streamed tool call', async () => {
    const final = await client.chat.completions
      .stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'weather in Paris?' }], tools: [weatherTool] })
      .finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    const call = final.choices[0].message.tool_calls![0];
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });

  it('model list discovered from /openai/v1/models with the api-key header', async () => {
    const listing = az.requests.find((r) => r.method === 'GET' && r.path === '/openai/v1/models');
    expect(listing).toBeDefined();
    expect(listing!.headers['api-key']).toBe(KEY);
    const served = t.gw.deps.live.providersByName.get('az-v1-listed')!.models;
    expect([...served].sort()).toEqual(['gpt-4o', 'gpt-4o-mini', 'text-embedding-3-small']);
  });

  it('embeddings: /openai/v1/embeddings with the deployment, base64 as the Node SDK asks by default', async () => {
    const r = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha beta', 'gamma'] });
    expect(r.data.map((d) => d.embedding)).toEqual([fakeEmbedding('alpha beta'), fakeEmbedding('gamma')]);
    expect(r.usage).toMatchObject({ prompt_tokens: 3, total_tokens: 3 });
    const req = lastRequest(az);
    expect(req.path).toBe('/openai/v1/embeddings');
    expect(req.body.model).toBe('embed-dep');
    expect(req.headers['api-key']).toBe(KEY);
  });
});

describe('deployments API (apiVersion set)', () => {
  it('non-stream: /openai/deployments/{dep}/chat/completions?api-version=...', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'classic azure' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('Echo: classic azure');
    expect(response.headers.get('x-gateway-provider')).toBe('az-dep');
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeGreaterThan(0);
    const req = lastRequest(az);
    expect(req.path).toBe(`/openai/deployments/mini-dep/chat/completions?api-version=${API_VERSION}`);
    expect(req.headers['api-key']).toBe(KEY);
    expect(req.headers.authorization).toBeUndefined();
  });

  it('stream helper: text and tool call, usage chunk when asked', async () => {
    const chunks: ChatCompletionChunk[] = [];
    const runner = client.chat.completions.stream({ model: 'gpt-4o-mini', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'classic stream' }] });
    runner.on('chunk', (c) => chunks.push(c));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('Echo: classic stream');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
    expect(lastRequest(az).path).toBe(`/openai/deployments/mini-dep/chat/completions?api-version=${API_VERSION}`);

    const tool = await client.chat.completions
      .stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool] })
      .finalChatCompletion();
    expect(tool.choices[0].finish_reason).toBe('tool_calls');
  });

  it('model list discovered from /openai/models?api-version=..., deployment = model id when unmapped', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('gpt-4.1');
    expect(old.requests.some((r) => r.method === 'GET' && r.path === `/openai/models?api-version=${API_VERSION}`)).toBe(true);
    const r = await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'old resource' }] });
    expect(r.choices[0].message.content).toBe('Echo: old resource');
    expect(lastRequest(old).path).toBe(`/openai/deployments/gpt-4.1/chat/completions?api-version=${API_VERSION}`);
    expect(lastRequest(old).headers['api-key']).toBe(OLD_KEY);
  });
});

describe('Azure errors', () => {
  it('a wrong resource key is the provider\'s failure: 502 naming it, never a 401', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-4o-badkey', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502 });
    expect(String((err as { error: Obj }).error.message)).toContain('az-badkey');
  });

  it('an unknown deployment is a 404 with Azure\'s message', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-4o-broken', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 404 });
    const e = (err as { error: Obj }).error;
    expect(String(e.message)).toMatch(/deployment/i);
    expect(e.code).toBe('DeploymentNotFound');
  });

  it('an api-version the resource does not serve is a 400 with Azure\'s message', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-4o-badver', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect(String((err as { error: Obj }).error.message)).toMatch(/API version not supported/);
    expect(lastRequest(az).path).toBe('/openai/deployments/prod-4o/chat/completions?api-version=1999-01-01');
  });
});
