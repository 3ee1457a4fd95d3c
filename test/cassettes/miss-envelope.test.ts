/**
 * The miss error in each protocol's envelope, checked with each protocol's official SDK over real
 * HTTP: on `/v1/messages` the Anthropic SDK raises NotFoundError (`not_found_error`, the reason
 * `cassette_miss` leading the message) and does not retry despite its default retries; elsewhere the
 * OpenAI SDK raises NotFoundError with `code: cassette_miss`.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalRequest } from '../../core/cassettes/canonical.ts';
import { cassetteMiss, sendProtocolError } from '../../core/cassettes/miss-error.ts';

let server: Server;
let url = '';
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const endpoint = (req.url ?? '').split('?')[0];
      const canonical = canonicalRequest(endpoint, req.headers['content-type'], Buffer.concat(chunks))!;
      sendProtocolError(res, endpoint, cassetteMiss(canonical, 'test/cassettes-dir', null), { 'x-request-id': 'req_test' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('a cassette miss', () => {
  it('Anthropic Messages: not_found_error in the Anthropic envelope, not retried', async () => {
    hits = 0;
    const client = new Anthropic({ apiKey: 'sk-gw-test', baseURL: url, maxRetries: 2 });
    const err = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    const e = err as InstanceType<typeof Anthropic.NotFoundError>;
    expect(e.status).toBe(404);
    expect((e.error as { type: string; error: { type: string; message: string } }).error.type).toBe('not_found_error');
    expect((e.error as { error: { message: string } }).error.message).toMatch(
      /^cassette_miss: Cassette miss: no recorded answer for POST \/v1\/messages \(model claude-sonnet-4-6/,
    );
    expect(e.requestID).toBe('req_test');
    expect(hits).toBe(1);
  });

  it('OpenAI: code cassette_miss, not retried', async () => {
    hits = 0;
    const client = new OpenAI({ apiKey: 'sk-gw-test', baseURL: `${url}/v1`, maxRetries: 2 });
    const err = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('cassette_miss');
    expect(hits).toBe(1);
  });
});
