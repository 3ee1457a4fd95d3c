/**
 * Malformed input of every kind answers in the OpenAI envelope with a 4xx, through the real server:
 * a slow body (408 after the body timeout, connection closed), JSON nested 10,000 deep, a 40 MB model
 * name (refused, and nothing big stored or printed), a duplicated multipart field, parser-level errors
 * (Node's own bare 400/431 replaced by the envelope).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { ExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import type { CallRow } from '../../core/storage/audit-writer.ts';

let t: TestGateway;
let up: FakeUpstream;
let extra: ExtraUpstream;
const rows: CallRow[] = [];
const BODY_MS = 300;

beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'] });
  extra = await startOpenAIExtraUpstream();
  t = await startTestGateway({
    providers: [
      { name: 'up', type: 'openai', baseUrl: up.url, secret: 'sk-hard-up-0123456789abcdef', models: ['gpt-4o-mini'] },
      { name: 'extra', type: 'openai', baseUrl: extra.url, secret: 'sk-hard-extra-0123456789abcdef', models: ['whisper-1'] },
    ],
    keys: [{ name: 'k' }],
    settings: { timeouts: { connectMs: 10_000, firstByteMs: 600_000, firstByteStreamMs: 120_000, idleMs: 60_000, bodyMs: BODY_MS } },
  });
  t.gw.onCall((row) => rows.push(row));
});

afterAll(async () => {
  await t?.close();
  await up?.close();
  await extra?.close();
});

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
  closed: boolean;
}

/** Writes raw bytes on a fresh socket and reads until the server closes it (or `waitMs` passes). */
function raw(chunks: string[], waitMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sock = connect(t.gw.port, '127.0.0.1');
    let data = '';
    let closed = false;
    const done = () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body: rest.join('\r\n\r\n'), closed });
    };
    const timer = setTimeout(() => {
      sock.destroy();
      done();
    }, waitMs);
    sock.on('data', (d) => (data += d.toString('utf8')));
    sock.on('error', reject);
    sock.on('close', () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
    for (const c of chunks) sock.write(c);
  });
}

function envelope(body: string): { message: string; type: string; param: string | null; code: string | null } {
  const json = JSON.parse(body) as { error: { message: string; type: string; param: string | null; code: string | null } };
  expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return json.error;
}

const post = (path: string, body: string | Buffer, contentType = 'application/json') =>
  fetch(`${t.baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${t.key}`, 'content-type': contentType }, body });

describe('malformed input', () => {
  it('a sender that goes silent mid-body gets a 408 in the envelope and the connection is closed', async () => {
    const before = up.requests.length;
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const answer = await raw([head, '{"model":"gpt-4o-mini","messages":['], 10_000);
    expect(answer.status).toBe(408);
    expect(answer.headers).toContain('application/json');
    expect(envelope(answer.body)).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout' });
    expect(answer.closed).toBe(true);
    expect(up.requests.length).toBe(before);
  });

  it('a refused request whose body is still coming is answered and its connection closed, not drained forever', async () => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-gw-not-a-real-key\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
    const answer = await raw([head, '{"model":"gpt-4o-mini"'], 5000);
    expect(answer.status).toBe(401);
    expect(envelope(answer.body).type).toBe('invalid_api_key');
    expect(answer.closed).toBe(true);
  });

  it('JSON nested 10,000 deep is a 400 invalid_json, not a 500', async () => {
    const deep = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const res = await post('/chat/completions', deep);
    expect(res.status).toBe(400);
    expect(envelope(await res.text())).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    const objects = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const res2 = await post('/embeddings', objects);
    expect(res2.status).toBe(400);
    expect(envelope(await res2.text()).code).toBe('invalid_json');
  });

  it('a 40 MB model name is refused early; neither the audit row nor the event carry it', async () => {
    const before = up.requests.length;
    const huge = 'm'.repeat(40 * 1024 * 1024);
    const res = await post('/chat/completions', JSON.stringify({ model: huge, messages: [{ role: 'user', content: 'hi' }] }));
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBeLessThan(1000);
    expect(envelope(text)).toMatchObject({ param: 'model', code: 'invalid_value' });
    expect(up.requests.length).toBe(before);
    const row = rows.at(-1) as CallRow;
    expect(row.status).toBe(400);
    // What is printed (the plain log line, the event stream) comes from this row.
    expect(JSON.stringify(row).length).toBeLessThan(70 * 1024);
    t.flush();
    const store = t.openStore();
    try {
      const stored = store.db.prepare('SELECT length(model_requested) AS m, length(request_body) AS b, length(error_message) AS e FROM calls WHERE id = ?').get(row.id) as { m: number | null; b: number; e: number };
      expect(stored.m ?? 0).toBeLessThanOrEqual(256);
      expect(stored.b).toBeLessThanOrEqual(64 * 1024);
      expect(stored.e).toBeLessThan(1000);
    } finally {
      store.close();
    }
  });

  it('an audio upload with two model fields is refused, not forwarded with both', async () => {
    const before = extra.requests.length;
    const b = 'dupBoundary';
    const body = Buffer.from(
      `--${b}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="model"\r\n\r\ngpt-4o-transcribe\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--${b}--\r\n`,
    );
    const res = await post('/audio/transcriptions', body, `multipart/form-data; boundary=${b}`);
    expect(res.status).toBe(400);
    expect(envelope(await res.text())).toMatchObject({ param: 'model', code: 'duplicate_parameter', type: 'invalid_request_error' });
    expect(extra.requests.length).toBe(before);
  });

  it('bad multipart is a 400 in the envelope', async () => {
    const res = await post('/audio/transcriptions', Buffer.from('--x\r\nno headers end'), 'multipart/form-data; boundary=x');
    expect(res.status).toBe(400);
    expect(envelope(await res.text()).code).toBe('invalid_multipart');
  });

  it("parser-level errors get the envelope instead of Node's bare 400/431", async () => {
    const garbage = await raw(['GARBAGE \x01\x02 HTTP/1.1\r\n\r\n']);
    expect(garbage.status).toBe(400);
    expect(envelope(garbage.body).type).toBe('invalid_request_error');

    const bigHeader = await raw([`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`]);
    expect(bigHeader.status).toBe(431);
    expect(envelope(bigHeader.body).code).toBe('request_header_fields_too_large');

    const smuggle = await raw([`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`]);
    expect(smuggle.status).toBe(400);
    expect(envelope(smuggle.body).type).toBe('invalid_request_error');
  });

  it('the gateway still serves after all of that', async () => {
    const res = await post('/chat/completions', JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
    expect(res.status).toBe(200);
  });
});
