/** The minimal multipart/form-data reader of the audio endpoints, against bodies built by undici's FormData. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../core/errors.ts';
import { fieldText, multipartBoundary, parseMultipart, replacePartContent } from '../../core/gateway/multipart.ts';

async function encode(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const res = new Response(form);
  return { body: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type') ?? '' };
}

const AUDIO = Buffer.from([0x52, 0x49, 0x46, 0x46, 0xff, 0x00, 0x0d, 0x0a, 0x2d, 0x2d, 0x80]);

describe('multipart', () => {
  it('reads the boundary of a multipart/form-data Content-Type only', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc')).toBe('abc');
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b:c"')).toBe('a b:c');
    expect(multipartBoundary('application/json')).toBeNull();
    expect(multipartBoundary('multipart/form-data')).toBeNull();
    expect(multipartBoundary(undefined)).toBeNull();
  });

  it('finds fields and files, with exact byte ranges', async () => {
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([AUDIO], { type: 'audio/wav' }), 'a b.wav');
    form.append('timestamp_granularities[]', 'word');
    form.set('prompt', 'héllo\r\nworld');
    const { body, contentType } = await encode(form);
    const parts = parseMultipart(body, multipartBoundary(contentType) as string);
    expect(parts.map((p) => [p.name, p.filename])).toEqual([
      ['model', null],
      ['file', 'a b.wav'],
      ['timestamp_granularities[]', null],
      ['prompt', null],
    ]);
    expect(fieldText(body, parts[0])).toBe('whisper-1');
    expect(body.subarray(parts[1].start, parts[1].end).equals(AUDIO)).toBe(true);
    expect(parts[1].contentType).toBe('audio/wav');
    expect(fieldText(body, parts[3])).toBe('héllo\r\nworld');
  });

  it('rewrites one field and keeps every other byte', async () => {
    const form = new FormData();
    form.set('file', new Blob([AUDIO]), 'a.wav');
    form.set('model', 'my-alias');
    const { body, contentType } = await encode(form);
    const boundary = multipartBoundary(contentType) as string;
    const model = parseMultipart(body, boundary).find((p) => p.name === 'model');
    const out = replacePartContent(body, model!, 'whisper-1');
    const again = parseMultipart(out, boundary);
    expect(fieldText(out, again[1])).toBe('whisper-1');
    expect(out.subarray(again[0].start, again[0].end).equals(AUDIO)).toBe(true);
    expect(out.length).toBe(body.length - 'my-alias'.length + 'whisper-1'.length);
    expect(out.subarray(0, model!.start).equals(body.subarray(0, model!.start))).toBe(true);
  });

  it('accepts a preamble and a part without headers', () => {
    const body = Buffer.from('preamble\r\n--xx\r\nContent-Disposition: form-data; name="model"\r\n\r\ngpt\r\n--xx--\r\n');
    const parts = parseMultipart(body, 'xx');
    expect(parts).toHaveLength(1);
    expect(fieldText(body, parts[0])).toBe('gpt');
  });

  it('a malformed body is a 400, not a crash', () => {
    for (const text of ['no boundary here', '--xx\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated', '--xx\r\nX-Nothing: 1\r\n\r\nv\r\n--xx--']) {
      try {
        parseMultipart(Buffer.from(text), 'xx');
        throw new Error(`accepted: ${text}`);
      } catch (err) {
        expect(err).toBeInstanceOf(GatewayError);
        expect((err as GatewayError).status).toBe(400);
      }
    }
  });
});
