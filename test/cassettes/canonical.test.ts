/**
 * The canonical request: key order and volatile fields do not change the digest; every field that
 * changes the answer does (stream, stream_options, temperature, a message); multipart bodies match by
 * field and by the file's bytes, not by boundary or file name. And the cassette file format: stable
 * bytes, bodies kept exactly (JSON when it round-trips, else text or base64).
 */
import { describe, expect, it } from 'vitest';
import { VOLATILE_FIELDS, canonicalRequest } from '../../core/cassettes/canonical.ts';
import { cassetteFileName, encodeBody, interactionBody, newCassetteFile, parseCassette, serializeCassette } from '../../core/cassettes/format.ts';

const json = (o: unknown) => Buffer.from(JSON.stringify(o));
const chat = (o: Record<string, unknown>) => canonicalRequest('/v1/chat/completions', 'application/json', json(o))!;
const base = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };

function multipart(boundary: string, fields: Array<[string, string | { filename: string; data: Buffer }]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, v] of fields) {
    if (typeof v === 'string') parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`));
    else
      parts.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${v.filename}"\r\nContent-Type: audio/wav\r\n\r\n`),
        v.data,
        Buffer.from('\r\n'),
      );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(parts);
}

describe('canonical request', () => {
  it('ignores key order and the documented volatile fields', () => {
    const a = chat(base);
    const b = chat({
      temperature: 0,
      messages: [{ content: 'hi', role: 'user' }],
      model: 'gpt-4o-mini',
      user: 'u-1',
      metadata: { run: 'x' },
      client_metadata: { session: 'y' },
      prompt_cache_key: 'k',
      safety_identifier: 's',
    });
    expect(b.digest).toBe(a.digest);
    expect(VOLATILE_FIELDS).toEqual(['user', 'metadata', 'client_metadata', 'prompt_cache_key', 'safety_identifier']);
    expect(a).toMatchObject({ endpoint: '/v1/chat/completions', model: 'gpt-4o-mini', stream: false });
    expect(a.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('every field that changes the answer changes the digest, and so does the endpoint', () => {
    const d = chat(base).digest;
    for (const change of [
      { stream: true },
      { stream: true, stream_options: { include_usage: true } },
      { temperature: 1 },
      { messages: [{ role: 'user', content: 'hi!' }] },
      { n: 2 },
      { model: 'gpt-4o' },
    ]) {
      expect(chat({ ...base, ...change }).digest, JSON.stringify(change)).not.toBe(d);
    }
    expect(canonicalRequest('/v1/completions', 'application/json', json(base))!.digest).not.toBe(d);
  });

  it('multipart: by field and file hash, whatever the boundary and the file name', () => {
    const audio = Buffer.from([0xff, 0x00, 0x80, 0x41]);
    const a = canonicalRequest(
      '/v1/audio/transcriptions',
      'multipart/form-data; boundary=aaa',
      multipart('aaa', [
        ['model', 'whisper-1'],
        ['file', { filename: '/tmp/x1.wav', data: audio }],
      ]),
    )!;
    const b = canonicalRequest(
      '/v1/audio/transcriptions',
      'multipart/form-data; boundary=bbb',
      multipart('bbb', [
        ['file', { filename: 'y.wav', data: audio }],
        ['model', 'whisper-1'],
      ]),
    )!;
    const c = canonicalRequest(
      '/v1/audio/transcriptions',
      'multipart/form-data; boundary=aaa',
      multipart('aaa', [
        ['model', 'whisper-1'],
        ['file', { filename: 'x.wav', data: Buffer.from([1]) }],
      ]),
    )!;
    expect(a.model).toBe('whisper-1');
    expect(b.digest).toBe(a.digest);
    expect(c.digest).not.toBe(a.digest);
    expect(JSON.stringify(a.body)).not.toContain('x1.wav');
  });

  it('a body that is neither JSON nor multipart has no canonical form', () => {
    expect(canonicalRequest('/v1/chat/completions', 'application/json', Buffer.from('{oops'))).toBeNull();
    expect(canonicalRequest('/v1/chat/completions', 'application/json', Buffer.from('[1]'))).toBeNull();
  });
});

describe('cassette file', () => {
  it('is named by endpoint, model and digest, and serialises to the same bytes every time', () => {
    const req = chat({ ...base, model: 'deepseek-ai/DeepSeek-V3' });
    expect(cassetteFileName(req)).toMatch(/^v1\.chat\.completions--deepseek-ai_DeepSeek-V3--[0-9a-f]{12}\.json$/);
    const file = newCassetteFile(req);
    file.interactions.push({
      recorded_at: '2026-01-01T00:00:00.000Z',
      status: 200,
      headers: { 'x-b': '1', 'content-type': 'application/json' },
      cost_usd: 0.5,
      ...encodeBody(json({ b: 1, a: [1.5e-7, 'é'] })),
    });
    const text = serializeCassette(file);
    expect(serializeCassette(parseCassette(text, 'x'))).toBe(text);
    expect(text.indexOf('"content-type"')).toBeLessThan(text.indexOf('"x-b"'));
  });

  it('keeps every body byte for byte', () => {
    for (const body of [json({ z: 1, a: 2 }), Buffer.from('{"spaced": 1}'), Buffer.from('1\n00:00:00,000 --> x\n'), Buffer.from([0xff, 0xfe, 0x00])]) {
      const i = { recorded_at: '', status: 200, headers: {}, cost_usd: null, ...encodeBody(body) };
      expect(interactionBody(i).equals(body)).toBe(true);
    }
    expect(encodeBody(Buffer.from('{"spaced": 1}')).text).toBe('{"spaced": 1}');
    expect(encodeBody(Buffer.from([0xff])).base64).toBe('/w==');
  });
});
