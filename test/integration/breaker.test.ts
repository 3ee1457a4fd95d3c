/**
 * The circuit breaker through the real gateway, driven by a manual clock (never by sleeping): it opens
 * after repeated failures, keeps the provider out for the cooldown, lets exactly one probe through,
 * closes when the probe succeeds and re-opens (with a longer cooldown) when it fails.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../core/settings.ts';
import { getCall } from '../../core/storage/audit-queries.ts';
import type { StoredCall } from '../../core/storage/audit-queries.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { ManualClock } from '../routing/manual-clock.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { dbOf } from '../support/sqlite-db.ts';

const MODEL = 'gpt-4o-mini';
const COOLDOWN = 10_000;
const messages = [{ role: 'user' as const, content: 'hello' }];
const settings = {
  // Two attempts per request (alpha then beta): each request counts one failure against alpha.
  routing: { strategy: 'priority', maxAttempts: 2, breakerFailures: 2, breakerCooldownMs: COOLDOWN },
} satisfies Partial<Settings>;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Rig {
  t: TestGateway;
  alpha: FakeUpstream;
  beta: FakeUpstream;
  clock: ManualClock;
}

async function rig(): Promise<Rig> {
  const alpha = await startOpenAIUpstream({ models: [MODEL] });
  cleanups.push(() => alpha.close());
  const beta = await startOpenAIUpstream({ models: [MODEL] });
  cleanups.push(() => beta.close());
  const clock = new ManualClock();
  const t = await startTestGateway({
    providers: [
      { name: 'alpha', type: 'openai', baseUrl: alpha.url, secret: 'sk-alpha-0123456789abcdef', models: [MODEL], priority: 1 },
      { name: 'beta', type: 'openai', baseUrl: beta.url, secret: 'sk-beta-0123456789abcdef', models: [MODEL], priority: 2 },
    ],
    settings,
    clock,
  });
  cleanups.push(() => t.close());
  return { t, alpha, beta, clock };
}

interface Answer {
  provider: string | null;
  attempts: string | null;
  row: StoredCall;
}

async function call(t: TestGateway): Promise<Answer> {
  const { data, response } = await t.client().chat.completions.create({ model: MODEL, messages }).withResponse();
  expect(data.choices[0].message.content).toBe('Echo: hello');
  const id = response.headers.get('x-request-id') ?? '';
  const deadline = Date.now() + 3_000;
  let row: StoredCall | null = null;
  while (row === null) {
    t.flush();
    row = getCall(dbOf(t.gw), id);
    if (row === null && Date.now() > deadline) throw new Error(`no audit row for ${id}`);
    if (row === null) await new Promise((r) => setTimeout(r, 20));
  }
  return { provider: response.headers.get('x-gateway-provider'), attempts: response.headers.get('x-gateway-attempts'), row };
}

/** Opens alpha's breaker: two requests, each failing on alpha and answered by beta. */
async function openAlpha(r: Rig): Promise<void> {
  r.alpha.setDefaultFault({ kind: 'status', status: 500 });
  for (let i = 0; i < 2; i++) {
    const a = await call(r.t);
    expect([a.provider, a.attempts]).toEqual(['beta', '2']);
  }
  expect(r.alpha.requests).toHaveLength(2);
  expect(r.t.gw.deps.breaker.state('alpha')).toBe('open');
}

describe('circuit breaker through the gateway', () => {
  it('does not count clients that leave before the provider answers against the provider', async () => {
    const r = await rig();
    const { t, alpha } = r;
    alpha.setDefaultFault({ kind: 'hang' });
    for (let i = 0; i < 3; i++) {
      const gone = new AbortController();
      const pending = t.client().chat.completions.create({ model: MODEL, messages }, { signal: gone.signal, maxRetries: 0 });
      const seen = alpha.requests.length;
      const deadline = Date.now() + 3_000;
      while (alpha.requests.length === seen && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
      gone.abort();
      await expect(pending).rejects.toThrow();
    }
    // Three clients gone while alpha was thinking: alpha is not unhealthy, and the next call is its own.
    await new Promise((res) => setTimeout(res, 100));
    expect(t.gw.deps.breaker.state('alpha')).toBe('closed');
    alpha.setDefaultFault(null);
    expect((await call(t)).provider).toBe('alpha');
  });

  it('opens after repeated failures and keeps the provider out for the whole cooldown', async () => {
    const r = await rig();
    const { t, alpha, clock } = r;
    // One failure is not enough.
    alpha.setDefaultFault({ kind: 'status', status: 500 });
    await call(t);
    expect(t.gw.deps.breaker.state('alpha')).toBe('closed');
    // A success in between resets the count: failures must be consecutive.
    alpha.setDefaultFault(null);
    expect((await call(t)).provider).toBe('alpha');
    alpha.requests.length = 0;

    await openAlpha(r);
    // Open: alpha is not even contacted, beta answers in one attempt.
    const skipped = await call(t);
    expect([skipped.provider, skipped.attempts]).toEqual(['beta', '1']);
    expect(skipped.row.attemptList.map((a) => a.provider)).toEqual(['beta']);
    expect(alpha.requests).toHaveLength(2);

    // One millisecond before the cooldown ends it is still out.
    clock.advance(COOLDOWN - 1);
    const still = await call(t);
    expect([still.provider, still.attempts]).toEqual(['beta', '1']);
    expect(alpha.requests).toHaveLength(2);
  });

  it('after the cooldown one probe goes through; its success closes the breaker', async () => {
    const r = await rig();
    const { t, alpha, clock } = r;
    await openAlpha(r);
    alpha.setDefaultFault(null);
    clock.advance(COOLDOWN);
    expect(t.gw.deps.breaker.state('alpha')).toBe('half-open');

    const probe = await call(t);
    expect([probe.provider, probe.attempts]).toEqual(['alpha', '1']);
    expect(probe.row.attemptList).toEqual([expect.objectContaining({ provider: 'alpha', status: 200 })]);
    expect(alpha.requests).toHaveLength(3);
    expect(t.gw.deps.breaker.state('alpha')).toBe('closed');

    // Closed again: alpha is back in front without waiting for anything.
    expect((await call(t)).provider).toBe('alpha');
    expect(alpha.requests).toHaveLength(4);
  });

  it('a failed probe re-opens it with a doubled cooldown', async () => {
    const r = await rig();
    const { t, alpha, clock } = r;
    await openAlpha(r);
    clock.advance(COOLDOWN);

    const probe = await call(t);
    expect([probe.provider, probe.attempts]).toEqual(['beta', '2']);
    expect(probe.row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', 500],
      ['beta', 200],
    ]);
    expect(alpha.requests).toHaveLength(3);
    expect(t.gw.deps.breaker.state('alpha')).toBe('open');
    expect(t.gw.deps.breaker.snapshotOf('alpha').cooldownMs).toBe(2 * COOLDOWN);

    // The first cooldown's length is no longer enough.
    clock.advance(COOLDOWN);
    expect((await call(t)).provider).toBe('beta');
    expect(alpha.requests).toHaveLength(3);

    // After the doubled cooldown, a probe again; this one succeeds and closes it.
    alpha.setDefaultFault(null);
    clock.advance(COOLDOWN);
    expect((await call(t)).provider).toBe('alpha');
    expect(t.gw.deps.breaker.state('alpha')).toBe('closed');
  });

  it('lets only one probe through while it is in flight', async () => {
    const r = await rig();
    const { t, alpha, beta, clock } = r;
    await openAlpha(r);
    alpha.setDefaultFault(null);
    clock.advance(COOLDOWN);
    // The probe takes a while to answer; meanwhile other requests must not pile onto alpha.
    alpha.queueFault({ kind: 'delay', ms: 1_500 });
    const probe = call(t);
    const deadline = Date.now() + 5_000;
    while (alpha.requests.length < 3) {
      if (Date.now() > deadline) throw new Error('the probe never reached alpha');
      await new Promise((res) => setTimeout(res, 5));
    }
    const betaBefore = beta.requests.length;
    const during = await Promise.all([call(t), call(t)]);
    for (const d of during) expect([d.provider, d.attempts]).toEqual(['beta', '1']);
    expect(alpha.requests).toHaveLength(3);
    expect(beta.requests.length).toBe(betaBefore + 2);

    const p = await probe;
    expect([p.provider, p.attempts]).toEqual(['alpha', '1']);
    expect(t.gw.deps.breaker.state('alpha')).toBe('closed');
  });

  it('429s do not open the breaker (rate-limited is not broken)', async () => {
    const r = await rig();
    const { t, alpha } = r;
    alpha.setDefaultFault({ kind: 'status', status: 429, headers: { 'retry-after': '30' } });
    for (let i = 0; i < 4; i++) expect((await call(t)).provider).toBe('beta');
    expect(alpha.requests).toHaveLength(4);
    expect(t.gw.deps.breaker.state('alpha')).toBe('closed');
  });
});
