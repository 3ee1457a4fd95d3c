/**
 * The cap on concurrent client connections (`maxConnections`): connections within it are served and
 * kept alive; a request on one over it gets 503 `too_many_connections` in the OpenAI envelope (the
 * official SDK reads it as such), with `retry-after` and the connection closed; a silent one over the
 * cap is closed; a slot freed is usable again.
 */
import { connect, type Socket } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OVER_CAP_IDLE_MS } from '../../core/gateway/connection-cap.ts';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.ts';

let t: TestGateway;
let port: number;
beforeAll(async () => {
  t = await startTestGateway({ demo: true, settings: { maxConnections: 3 } });
  port = Number(new URL(t.gw.url).port);
});
afterAll(async () => {
  await t?.close();
});

interface Conn {
  socket: Socket;
  data: () => string;
  closed: Promise<void>;
}

async function open(): Promise<Conn> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buf = '';
  socket.on('data', (d) => (buf += d.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, data: () => buf, closed };
}

async function healthz(c: Conn): Promise<string> {
  const before = c.data().length;
  c.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  for (let i = 0; i < 500; i++) {
    const got = c.data().slice(before);
    const head = got.indexOf('\r\n\r\n');
    const length = /content-length: (\d+)/i.exec(got);
    if (head !== -1 && length && got.length >= head + 4 + Number(length[1])) return got;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no whole answer: ${c.data().slice(before)}`);
}

describe('maxConnections', () => {
  it('serves connections within the cap and answers 503 in the envelope on one over it', async () => {
    const within = await Promise.all([open(), open(), open()]);
    for (const c of within) expect(await healthz(c)).toMatch(/^HTTP\/1\.1 200 /);

    const over = await open();
    const answer = await healthz(over);
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toMatch(/\r\ncontent-type: application\/json/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { type: string; code: string; message: string; param: null } };
    expect(body.error).toMatchObject({ type: 'api_error', code: 'too_many_connections', param: null });
    expect(body.error.message).toMatch(/maxConnections/);
    await over.closed;

    // The official SDK, on a connection of its own, sees the same error.
    const sdk = new OpenAI({ apiKey: t.key, baseURL: t.baseUrl, maxRetries: 0 });
    const err = await sdk.models.list().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('too_many_connections');

    // The connections within the cap are still alive and served.
    for (const c of within) expect(await healthz(c)).toMatch(/^HTTP\/1\.1 200 /);

    // A slot freed is usable again.
    within[0].socket.destroy();
    await within[0].closed;
    await new Promise((r) => setTimeout(r, 50));
    const again = await open();
    expect(await healthz(again)).toMatch(/^HTTP\/1\.1 200 /);
    for (const c of [...within.slice(1), again]) c.socket.destroy();
    await Promise.all([...within.slice(1), again].map((c) => c.closed));
    // The server sees the closes a moment after the client does.
    await new Promise((r) => setTimeout(r, 200));
  });

  it('closes a silent connection over the cap', { timeout: OVER_CAP_IDLE_MS + 10_000 }, async () => {
    const within = await Promise.all([open(), open(), open()]);
    for (const c of within) expect(await healthz(c)).toMatch(/^HTTP\/1\.1 200 /);
    const silent = await open();
    await silent.closed;
    expect(silent.data()).toBe('');
    for (const c of within) c.socket.destroy();
  });
});
