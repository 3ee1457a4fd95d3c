/**
 * Bounds that hold while the gateway runs: audit rows trimmed to `audit.maxRows` as they are written
 * (not only at the next start), a stalled `/admin/events` subscriber dropped instead of buffered without
 * limit, and a call that waits for a pooled upstream connection told so (`x-gateway-queued-ms`, a log
 * line) with its wait bounded (then a 504 in the envelope the SDKs may retry).
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';

let t: TestGateway | null = null;
let up: FakeUpstream | null = null;

afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  await up?.close();
  t = null;
  up = null;
});

const chatBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const chat = (gw: TestGateway, key = gw.key) =>
  fetch(`${gw.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: chatBody });

describe('retention while running', () => {
  it('audit.maxRows holds during a run, not only at the next start', { timeout: 60_000 }, async () => {
    t = await startTestGateway({ settings: { audit: { storeBodies: true, retentionDays: 90, maxRows: 200 } } });
    const gw = t;
    // Refused calls are audited too (no key): 1,000 rows written, 200 may stay.
    for (let i = 0; i < 50; i++) await Promise.all(Array.from({ length: 20 }, () => chat(gw, 'sk-gw-wrong').then((r) => r.arrayBuffer())));
    gw.flush();
    const store = gw.openStore();
    try {
      const n = (store.db.prepare('SELECT COUNT(*) AS n FROM calls').get() as { n: number }).n;
      expect(n).toBeLessThanOrEqual(200);
      expect(n).toBeGreaterThan(100);
      // The newest calls are the ones kept.
      const newest = store.db.prepare('SELECT MAX(time) AS t FROM calls').get() as { t: number };
      expect(Date.now() - newest.t).toBeLessThan(30_000);
    } finally {
      store.close();
    }
  });
});

describe('event-stream subscribers', () => {
  it('a subscriber that stops reading is dropped once its buffer passes the bound', { timeout: 60_000 }, async () => {
    up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
    // Every call fails with a long upstream message, so each event is a few KiB (the message is capped at 4 KiB).
    up.setDefaultFault({ kind: 'status', status: 400, body: { error: { message: 'x'.repeat(10_000), type: 'invalid_request_error', param: null, code: null } } });
    t = await startTestGateway({ providers: [{ name: 'up', type: 'openai', baseUrl: up.url, secret: 'sk-events-0123456789abcdef', models: ['gpt-4o-mini'] }] });
    const gw = t;
    const sock = connect(gw.gw.port, '127.0.0.1');
    let received = 0;
    let closed = false;
    sock.on('data', (d: Buffer) => (received += d.length));
    sock.on('close', () => (closed = true));
    sock.on('error', () => undefined);
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(`GET /admin/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${gw.gw.adminToken}\r\n\r\n`);
    for (let i = 0; i < 100 && received === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(received).toBeGreaterThan(0);
    // A suspended `gateway top`: nothing more is read.
    sock.pause();
    // Enough events to fill the kernel's socket buffers and then the bound.
    for (let i = 0; i < 200 && !closed; i++) await Promise.all(Array.from({ length: 20 }, () => chat(gw).then((r) => r.arrayBuffer())));
    sock.resume();
    await new Promise((r) => setTimeout(r, 500));
    expect(closed).toBe(true);
    // The server kept serving.
    const res = await fetch(`${gw.gw.url}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('upstream pool', () => {
  it('a call past the pool size waits visibly (header, log line), and a wait past the bound is a 504 the SDKs may retry', { timeout: 60_000 }, async () => {
    up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
    t = await startTestGateway({
      providers: [{ name: 'narrow', type: 'openai', baseUrl: up.url, secret: 'sk-pool-0123456789abcdef', models: ['gpt-4o-mini'] }],
      // One attempt, so the bounded wait shows as is (with more, the failover loop would try again).
      settings: { upstream: { connections: 64, connectionsByProvider: { narrow: 1 }, queueTimeoutMs: 1500 }, routing: { strategy: 'priority', maxAttempts: 1, breakerFailures: 3, breakerCooldownMs: 30_000 } },
    });
    const gw = t;
    const logged: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));

    up.queueFault({ kind: 'delay', ms: 400 });
    const [first, second] = await Promise.all([chat(gw), new Promise((r) => setTimeout(r, 50)).then(() => chat(gw))]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.headers.get('x-gateway-queued-ms')).toBeNull();
    expect(Number(second.headers.get('x-gateway-queued-ms'))).toBeGreaterThan(100);
    expect(logged.some((l) => l.includes('waited') && l.includes('pool full'))).toBe(true);

    up.queueFault({ kind: 'delay', ms: 3000 });
    const [slow, starved] = await Promise.all([chat(gw), new Promise((r) => setTimeout(r, 50)).then(() => chat(gw))]);
    expect(slow.status).toBe(200);
    expect(starved.status).toBe(504);
    const err = ((await starved.json()) as { error: { type: string; code: string; message: string } }).error;
    expect(err).toMatchObject({ type: 'api_error', code: 'upstream_timeout' });
    expect(err.message).toContain('pool full');
    // One attempt: the SDKs' own retry is welcome.
    expect(starved.headers.get('x-should-retry')).toBeNull();
  });
});
