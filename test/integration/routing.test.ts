/**
 * Routing through the real gateway: generic names resolve to the newest version a provider lists;
 * `cheapest` and `fastest` pick what they claim; an alias spanning two providers with different model
 * ids routes in its own order, both ways round, each provider called with its own model id.
 */
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../core/settings.ts';
import type { AliasTarget, RoutingStrategy } from '../../core/storage/aliases-repo.ts';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeOptions, FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway, TestGatewayOptions } from '../support/gateway-harness.ts';
import { auditRow } from '../support/call-checks.ts';

const messages = [{ role: 'user' as const, content: 'route me' }];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function openaiFake(opts: Partial<FakeOptions>): Promise<FakeUpstream> {
  const up = await startOpenAIUpstream(opts);
  cleanups.push(() => up.close());
  return up;
}
async function anthropicFake(opts: Partial<FakeOptions>): Promise<FakeUpstream> {
  const up = await startAnthropicUpstream(opts);
  cleanups.push(() => up.close());
  return up;
}
async function gateway(opts: TestGatewayOptions): Promise<TestGateway> {
  const t = await startTestGateway(opts);
  cleanups.push(() => t.close());
  return t;
}


/** Writes an alias the way the CLI does (another connection), then makes the server see it now. */
function setAlias(t: TestGateway, name: string, targets: AliasTarget[], strategy?: RoutingStrategy): void {
  const store = t.openStore();
  try {
    store.aliases.set(name, targets, strategy);
  } finally {
    store.close();
  }
  expect(t.gw.deps.live.reloadIfChanged()).toBe(true);
  expect(t.gw.deps.live.aliases.has(name)).toBe(true);
}

async function chat(t: TestGateway, model: string) {
  const { data, response } = await t.client().chat.completions.create({ model, messages }).withResponse();
  return { data, provider: response.headers.get('x-gateway-provider'), model: response.headers.get('x-gateway-model'), id: response.headers.get('x-request-id'), attempts: response.headers.get('x-gateway-attempts') };
}

const modelSent = (up: FakeUpstream): unknown => (up.requests.at(-1)?.body as { model?: unknown } | undefined)?.model;

describe('generic names', () => {
  it('resolve to the newest version the providers list (discovered from GET /models)', async () => {
    const an = await anthropicFake({
      models: ['claude-3-7-sonnet-20250219', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-20250514', 'claude-haiku-4-5-20251001', 'claude-3-5-haiku-20241022'],
    });
    // No --models: the gateway learns the list from the provider itself on start.
    const t = await gateway({ providers: [{ name: 'an', type: 'anthropic', baseUrl: an.url, secret: 'test-ant-key-0123456789abcdef' }] });
    expect(t.gw.deps.live.allModels.has('claude-sonnet-4-5-20250929')).toBe(true);

    const r = await chat(t, 'claude-sonnet');
    expect(r.model).toBe('claude-sonnet-4-5-20250929');
    expect(modelSent(an)).toBe('claude-sonnet-4-5-20250929');
    expect(r.data.choices[0].message.content).toBe('Echo: route me');
    const row = await auditRow(t, r.id);
    expect(row).toMatchObject({ modelRequested: 'claude-sonnet', model: 'claude-sonnet-4-5-20250929', provider: 'an', status: 200 });

    const haiku = await chat(t, 'claude-haiku');
    expect(haiku.model).toBe('claude-haiku-4-5-20251001');
    expect(modelSent(an)).toBe('claude-haiku-4-5-20251001');
  });

  it('dated names pass through untouched, even when a newer version exists', async () => {
    const an = await anthropicFake({ models: ['claude-sonnet-4-20250514', 'claude-sonnet-4-5-20250929'] });
    const t = await gateway({ providers: [{ name: 'an', type: 'anthropic', baseUrl: an.url, secret: 'test-ant-key-0123456789abcdef' }] });
    const r = await chat(t, 'claude-sonnet-4-20250514');
    expect(r.model).toBe('claude-sonnet-4-20250514');
    expect(modelSent(an)).toBe('claude-sonnet-4-20250514');
  });

  it('the newest version wins across providers, including one newer than the bundled data', async () => {
    const older = await openaiFake({ models: ['gpt-4o-2024-05-13', 'gpt-4o-2024-08-06'] });
    const newer = await openaiFake({ models: ['gpt-4o-2024-11-20'] });
    const an1 = await anthropicFake({ models: ['claude-sonnet-4-5-20250929'] });
    // A version no bundled list knows yet: it wins as soon as a provider lists it.
    const an2 = await anthropicFake({ models: ['claude-sonnet-9-20310101'] });
    const t = await gateway({
      providers: [
        { name: 'older', type: 'openai', baseUrl: older.url, secret: 'sk-older-0123456789abcdef', models: ['gpt-4o-2024-05-13', 'gpt-4o-2024-08-06'], priority: 1 },
        { name: 'newer', type: 'openai', baseUrl: newer.url, secret: 'sk-newer-0123456789abcdef', models: ['gpt-4o-2024-11-20'], priority: 50 },
        { name: 'an1', type: 'anthropic', baseUrl: an1.url, secret: 'sk-ant1-0123456789abcdef', models: ['claude-sonnet-4-5-20250929'], priority: 1 },
        { name: 'an2', type: 'anthropic', baseUrl: an2.url, secret: 'sk-ant2-0123456789abcdef', models: ['claude-sonnet-9-20310101'], priority: 50 },
      ],
    });
    const gpt = await chat(t, 'gpt-4o');
    expect([gpt.provider, gpt.model]).toEqual(['newer', 'gpt-4o-2024-11-20']);
    expect(modelSent(newer)).toBe('gpt-4o-2024-11-20');
    expect(older.requests).toHaveLength(0);

    const sonnet = await chat(t, 'claude-sonnet');
    expect([sonnet.provider, sonnet.model]).toEqual(['an2', 'claude-sonnet-9-20310101']);
    expect(modelSent(an2)).toBe('claude-sonnet-9-20310101');
  });

  it('a generic name nobody serves is a 404 that says what to do', async () => {
    const up = await openaiFake({ models: ['gpt-4o-mini'] });
    const t = await gateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: 'sk-oa-0123456789abcdef', models: ['gpt-4o-mini'] }] });
    const err = await t
      .client()
      .chat.completions.create({ model: 'claude-opus', messages })
      .then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
    expect(up.requests).toHaveLength(0);
  });
});

describe('cheapest', () => {
  it('per alias: picks the cheaper target by price data, whatever the order', async () => {
    const a = await openaiFake({ models: ['gpt-4o'] });
    const b = await openaiFake({ models: ['gpt-4o-mini'] });
    const t = await gateway({
      providers: [
        { name: 'alpha', type: 'openai', baseUrl: a.url, secret: 'sk-alpha-0123456789abcdef', models: ['gpt-4o'], priority: 1 },
        { name: 'beta', type: 'openai', baseUrl: b.url, secret: 'sk-beta-0123456789abcdef', models: ['gpt-4o-mini'], priority: 2 },
      ],
    });
    const prices = t.gw.deps.prices;
    const full = prices.lookup('openai', null, 'gpt-4o');
    const mini = prices.lookup('openai', null, 'gpt-4o-mini');
    expect(full && mini).toBeTruthy();
    expect(mini!.inputPerMTok + mini!.outputPerMTok).toBeLessThan(full!.inputPerMTok + full!.outputPerMTok);

    const targets = [
      { provider: 'alpha', model: 'gpt-4o' },
      { provider: 'beta', model: 'gpt-4o-mini' },
    ];
    setAlias(t, 'by-order', targets, 'priority');
    setAlias(t, 'by-price', targets, 'cheapest');
    const ordered = await chat(t, 'by-order');
    expect([ordered.provider, ordered.model]).toEqual(['alpha', 'gpt-4o']);
    const cheap = await chat(t, 'by-price');
    expect([cheap.provider, cheap.model]).toEqual(['beta', 'gpt-4o-mini']);
    expect(modelSent(b)).toBe('gpt-4o-mini');
    const row = await auditRow(t, cheap.id);
    expect(row).toMatchObject({ modelRequested: 'by-price', model: 'gpt-4o-mini', provider: 'beta', pricing: 'priced' });
  });

  it('per alias: user prices count, and the cheaper one still fails over to the dearer', async () => {
    const a = await openaiFake({ models: ['house-small'] });
    const b = await openaiFake({ models: ['house-large'] });
    const t = await gateway({
      providers: [
        { name: 'alpha', type: 'openai', baseUrl: a.url, secret: 'sk-alpha-0123456789abcdef', models: ['house-small'], priority: 1 },
        { name: 'beta', type: 'openai', baseUrl: b.url, secret: 'sk-beta-0123456789abcdef', models: ['house-large'], priority: 2 },
      ],
    });
    const store = t.openStore();
    try {
      store.prices.set('house-small', { inputPerMtok: 5, outputPerMtok: 5 });
      store.prices.set('house-large', { inputPerMtok: 1, outputPerMtok: 1 });
    } finally {
      store.close();
    }
    setAlias(t, 'house', [
      { provider: 'alpha', model: 'house-small' },
      { provider: 'beta', model: 'house-large' },
    ], 'cheapest');
    const r = await chat(t, 'house');
    expect([r.provider, r.model]).toEqual(['beta', 'house-large']);

    b.queueFault({ kind: 'status', status: 500 });
    const next = await chat(t, 'house');
    expect([next.provider, next.model, next.attempts]).toEqual(['alpha', 'house-small', '2']);
    const row = await auditRow(t, next.id);
    expect(row.attemptList.map((x) => [x.provider, x.model, x.status])).toEqual([
      ['beta', 'house-large', 500],
      ['alpha', 'house-small', 200],
    ]);
  });

  it('global: a provider with a known price beats one without, whatever the priorities', async () => {
    const groq = await openaiFake({ models: ['gpt-4o-mini'] });
    const oa = await openaiFake({ models: ['gpt-4o-mini'] });
    const providers = [
      // Groq does not sell gpt-4o-mini: its price is unknown, so it ranks after every known price.
      { name: 'groq', type: 'openai-compatible' as const, preset: 'groq', baseUrl: groq.url, secret: 'sk-groq-0123456789abcdef', models: ['gpt-4o-mini'], priority: 1 },
      { name: 'oa', type: 'openai' as const, baseUrl: oa.url, secret: 'sk-oa-0123456789abcdef', models: ['gpt-4o-mini'], priority: 2 },
    ];
    const byPriority = await gateway({ providers });
    expect((await chat(byPriority, 'gpt-4o-mini')).provider).toBe('groq');

    const settings = { routing: { strategy: 'cheapest', maxAttempts: 4, breakerFailures: 3, breakerCooldownMs: 30_000 } } satisfies Partial<Settings>;
    const cheapest = await gateway({ providers, settings });
    expect(cheapest.gw.deps.prices.lookup('openai-compatible', 'groq', 'gpt-4o-mini')).toBeNull();
    const r = await chat(cheapest, 'gpt-4o-mini');
    expect(r.provider).toBe('oa');
    expect(modelSent(oa)).toBe('gpt-4o-mini');
  });
});

describe('fastest', () => {
  const fastestSettings = { routing: { strategy: 'fastest', maxAttempts: 4, breakerFailures: 3, breakerCooldownMs: 30_000 } } satisfies Partial<Settings>;

  it('picks the provider with the lower measured latency, and follows when that changes', async () => {
    const slow = await openaiFake({ models: ['gpt-4o-mini'] });
    const fast = await openaiFake({ models: ['gpt-4o-mini'] });
    const t = await gateway({
      providers: [
        { name: 'slow', type: 'openai', baseUrl: slow.url, secret: 'sk-slow-0123456789abcdef', models: ['gpt-4o-mini'], priority: 1 },
        { name: 'fast', type: 'openai', baseUrl: fast.url, secret: 'sk-fast-0123456789abcdef', models: ['gpt-4o-mini'], priority: 2 },
      ],
      settings: fastestSettings,
    });
    const latency = t.gw.deps.latency;
    // No measurements yet: the priority order.
    expect((await chat(t, 'gpt-4o-mini')).provider).toBe('slow');
    expect(latency.estimate('slow', 'gpt-4o-mini')).toBeDefined();

    // Measure each provider (the provider/model form pins one), `slow` with a 250 ms delay.
    slow.setDefaultFault({ kind: 'delay', ms: 250 });
    expect((await chat(t, 'slow/gpt-4o-mini')).provider).toBe('slow');
    expect((await chat(t, 'fast/gpt-4o-mini')).provider).toBe('fast');
    const slowMs = latency.estimate('slow', 'gpt-4o-mini')!;
    const fastMs = latency.estimate('fast', 'gpt-4o-mini')!;
    expect(fastMs).toBeLessThan(slowMs);

    const r = await chat(t, 'gpt-4o-mini');
    expect(r.provider).toBe('fast');
    const row = await auditRow(t, r.id);
    expect(row.attemptList).toEqual([expect.objectContaining({ provider: 'fast', status: 200 })]);

    // Now `fast` turns slow and `slow` fast: once the averages cross, the choice follows.
    slow.setDefaultFault(null);
    fast.setDefaultFault({ kind: 'delay', ms: 400 });
    for (let i = 0; i < 12 && latency.estimate('slow', 'gpt-4o-mini')! >= latency.estimate('fast', 'gpt-4o-mini')!; i++) {
      await chat(t, 'slow/gpt-4o-mini');
      await chat(t, 'fast/gpt-4o-mini');
    }
    expect(latency.estimate('slow', 'gpt-4o-mini')!).toBeLessThan(latency.estimate('fast', 'gpt-4o-mini')!);
    expect((await chat(t, 'gpt-4o-mini')).provider).toBe('slow');
  });

  it('measures time to first token for streams, total latency otherwise', async () => {
    const up = await openaiFake({ models: ['gpt-4o-mini'] });
    const t = await gateway({
      providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: 'sk-oa-0123456789abcdef', models: ['gpt-4o-mini'] }],
      settings: fastestSettings,
    });
    const latency = t.gw.deps.latency;
    // A stream whose first event is immediate and the rest 120 ms apart: TTFT is small, the whole is not.
    up.queueFault({ kind: 'slow-stream', gapMs: 120 });
    const started = performance.now();
    const stream = await t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a b c d' }], stream: true });
    let text = '';
    for await (const c of stream as AsyncIterable<ChatCompletionChunk>) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Echo: a b c d');
    expect(performance.now() - started).toBeGreaterThanOrEqual(500);
    const ttft = latency.estimate('oa', 'gpt-4o-mini');
    expect(ttft).toBeDefined();
    expect(ttft!).toBeLessThan(120);

    latency.reset();
    up.queueFault({ kind: 'delay', ms: 300 });
    await chat(t, 'gpt-4o-mini');
    expect(latency.estimate('oa', 'gpt-4o-mini')!).toBeGreaterThanOrEqual(290);
  });
});

describe('an alias spanning two providers with different model ids', () => {
  async function rig() {
    const oa = await openaiFake({ models: ['gpt-4o-mini'] });
    const an = await anthropicFake({ models: ['claude-haiku-4-5-20251001'] });
    const t = await gateway({
      providers: [
        { name: 'oa', type: 'openai', baseUrl: oa.url, secret: 'sk-oa-0123456789abcdef', models: ['gpt-4o-mini'] },
        { name: 'an', type: 'anthropic', baseUrl: an.url, secret: 'sk-ant-0123456789abcdef', models: ['claude-haiku-4-5-20251001'] },
      ],
    });
    setAlias(t, 'team', [
      { provider: 'oa', model: 'gpt-4o-mini' },
      { provider: 'an', model: 'claude-haiku-4-5-20251001' },
    ]);
    setAlias(t, 'team-rev', [
      { provider: 'an', model: 'claude-haiku-4-5-20251001' },
      { provider: 'oa', model: 'gpt-4o-mini' },
    ]);
    return { t, oa, an };
  }

  it('goes to the first target, with that provider’s own model id', async () => {
    const { t, oa, an } = await rig();
    const r = await chat(t, 'team');
    expect([r.provider, r.model]).toEqual(['oa', 'gpt-4o-mini']);
    expect(modelSent(oa)).toBe('gpt-4o-mini');
    const rev = await chat(t, 'team-rev');
    expect([rev.provider, rev.model]).toEqual(['an', 'claude-haiku-4-5-20251001']);
    expect(modelSent(an)).toBe('claude-haiku-4-5-20251001');
    expect(rev.data.choices[0].message.content).toBe('Echo: route me');
    expect(oa.requests).toHaveLength(1);
    expect(an.requests).toHaveLength(1);
  });

  it('OpenAI first: fails over to Anthropic under its own model id', async () => {
    const { t, oa, an } = await rig();
    oa.queueFault({ kind: 'status', status: 503 });
    const r = await chat(t, 'team');
    expect([r.provider, r.model, r.attempts]).toEqual(['an', 'claude-haiku-4-5-20251001', '2']);
    expect(r.data.choices[0].message.content).toBe('Echo: route me');
    expect(modelSent(oa)).toBe('gpt-4o-mini');
    expect(modelSent(an)).toBe('claude-haiku-4-5-20251001');
    const row = await auditRow(t, r.id);
    expect(row).toMatchObject({ modelRequested: 'team', model: 'claude-haiku-4-5-20251001', provider: 'an' });
    expect(row.attemptList.map((x) => [x.provider, x.model, x.status])).toEqual([
      ['oa', 'gpt-4o-mini', 503],
      ['an', 'claude-haiku-4-5-20251001', 200],
    ]);
  });

  it('Anthropic first: fails over to OpenAI under its own model id (stream)', async () => {
    const { t, oa, an } = await rig();
    an.queueFault({ kind: 'status', status: 529 });
    const { data, response } = await t.client().chat.completions.create({ model: 'team-rev', messages, stream: true }).withResponse();
    let text = '';
    for await (const c of data) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Echo: route me');
    expect(response.headers.get('x-gateway-provider')).toBe('oa');
    expect(response.headers.get('x-gateway-model')).toBe('gpt-4o-mini');
    expect(modelSent(an)).toBe('claude-haiku-4-5-20251001');
    expect(modelSent(oa)).toBe('gpt-4o-mini');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    // Anthropic's 529 (overloaded) is recorded as the 503 OpenAI clients know.
    expect(row.attemptList.map((x) => [x.provider, x.model, x.status])).toEqual([
      ['an', 'claude-haiku-4-5-20251001', 503],
      ['oa', 'gpt-4o-mini', 200],
    ]);
  });
});

describe('an alias whose providers are all gone', () => {
  it('is a 404 that says it is an alias and names its missing targets', async () => {
    const up = await openaiFake({ models: ['gpt-4o-mini'] });
    const t = await gateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: 'sk-alias-gone-0123456789', models: ['gpt-4o-mini'] }] });
    setAlias(t, 'fast', [{ provider: 'removed', model: 'gpt-4o-mini' }]);
    const err = await t.client().chat.completions.create({ model: 'fast', messages }).catch((e: unknown) => e as { status?: number; code?: string; message?: string });
    expect(err).toMatchObject({ status: 404, code: 'model_not_found' });
    expect((err as Error).message).toMatch(/alias for removed\/gpt-4o-mini.*none of those providers is configured/);
  });
});
