/**
 * `POST /v1/images/generations`, `/v1/audio/transcriptions` and `/v1/audio/translations` through the
 * real gateway with the official `openai` SDK: pass-through bodies (the multipart bytes unchanged, the
 * `model` field rewritten only when the resolved name differs), the provider's Content-Type kept
 * (JSON, or text/plain for `text`/`srt`/`vtt`), per-token, per-minute and per-image pricing,
 * failover, OpenAI-shaped 400s and the audit rows.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_PNG_B64, fakeTranscript, startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { ExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { apiError, auditRow } from '../support/call-checks.ts';

const ALPHA_SECRET = 'sk-alpha-upstream-0123456789abcdef';
const BETA_SECRET = 'sk-beta-upstream-0123456789abcdef';
const MODELS = ['gpt-image-1', 'dall-e-3', 'whisper-1', 'gpt-4o-transcribe'];

/** A small WAV-like payload with bytes that are not valid UTF-8, to prove the body is forwarded byte for byte. */
const AUDIO = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0d, 0x0a, 0x2d, 0x2d, 0x99])]);



const errorOf = async (res: Response) => (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };

interface Rig {
  t: TestGateway;
  alpha: ExtraUpstream;
  beta: ExtraUpstream;
}

async function rig(): Promise<Rig> {
  const alpha = await startOpenAIExtraUpstream({ models: MODELS });
  const beta = await startOpenAIExtraUpstream({ models: MODELS });
  const t = await startTestGateway({
    providers: [
      { name: 'alpha', type: 'openai', baseUrl: alpha.url, secret: ALPHA_SECRET, models: MODELS, priority: 10 },
      { name: 'beta', type: 'openai-compatible', baseUrl: beta.url, secret: BETA_SECRET, models: MODELS, priority: 20 },
    ],
    keys: [{ name: 'test' }, { name: 'whisper-only', models: ['whisper-1'] }],
  });
  return { t, alpha, beta };
}

async function closeRig(r: Rig): Promise<void> {
  await r.t.close();
  await r.alpha.close();
  await r.beta.close();
}

/** The form fields of a recorded multipart body (the fake's recorder keeps it as a string). */
function formField(body: unknown, name: string): string | undefined {
  const m = new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)\\r\\n`).exec(String(body));
  return m?.[1];
}

describe('images', () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig();
  });
  afterAll(() => closeRig(r));

  it('gpt-image-1: b64_json passes through, token usage is priced', async () => {
    const { data, response } = await r.t.client().images.generate({ model: 'gpt-image-1', prompt: 'a red fox', size: '1024x1024', user: 'u-1' }).withResponse();
    expect(data.data?.[0].b64_json).toBe(FAKE_PNG_B64);
    expect(data.usage).toMatchObject({ input_tokens: 3, output_tokens: 272, total_tokens: 275 });
    const cost = (data.usage as unknown as { cost: number }).cost;
    // gpt-image-1: $5 input, $40 output per million tokens (bundled price data).
    expect(cost).toBeCloseTo((3 * 5 + 272 * 40) / 1e6, 12);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-gateway-provider')).toBe('alpha');
    expect(response.headers.get('x-gateway-model')).toBe('gpt-image-1');
    expect(response.headers.get('x-gateway-attempts')).toBe('1');
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeCloseTo(cost, 12);

    const sent = r.alpha.requests.at(-1);
    expect(sent?.path).toBe('/v1/images/generations');
    expect(sent?.headers.authorization).toBe(`Bearer ${ALPHA_SECRET}`);
    expect(sent?.body).toEqual({ model: 'gpt-image-1', prompt: 'a red fox', size: '1024x1024' });

    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({
      endpoint: '/v1/images/generations',
      modelRequested: 'gpt-image-1',
      model: 'gpt-image-1',
      provider: 'alpha',
      status: 200,
      inputTokens: 3,
      outputTokens: 272,
      pricing: 'priced',
      attempts: 1,
    });
    expect(row.costUsd).toBeCloseTo(cost, 12);
    // The audit row keeps the shape of the answer, not the image.
    expect(row.responseBody).not.toContain(FAKE_PNG_B64);
  });

  it('dall-e-3: no token usage, so the call pays the per-image price (1024x1024 standard: $0.04)', async () => {
    const { data, response } = await r.t.client().images.generate({ model: 'dall-e-3', prompt: 'a red fox', response_format: 'b64_json' }).withResponse();
    expect(data.data?.[0].b64_json).toBe(FAKE_PNG_B64);
    expect(data.usage).toBeUndefined();
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.04');
    expect(response.headers.get('x-gateway-pricing')).toBe('priced');
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: '/v1/images/generations', pricing: 'priced', costUsd: 0.04, inputTokens: 0, outputTokens: 0, status: 200 });
  });

  it('400 when the prompt is missing', async () => {
    const err = await apiError(r.t.client().images.generate({ model: 'gpt-image-1' } as unknown as OpenAI.ImageGenerateParamsNonStreaming));
    expect(err.status).toBe(400);
    expect(err.param).toBe('prompt');
    expect(err.code).toBe('missing_parameter');
    expect(err.type).toBe('invalid_request_error');
  });

  it('the key allow-list holds', async () => {
    const err = await apiError(r.t.client({ apiKey: r.t.keys['whisper-only'] }).images.generate({ model: 'gpt-image-1', prompt: 'x' }));
    expect(err.status).toBe(403);
    expect(err.code).toBe('model_not_allowed');
  });
});

describe('audio', () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig();
  });
  afterAll(() => closeRig(r));

  it('transcription (json): the multipart body goes upstream byte for byte; token usage is priced', async () => {
    const { data, response } = await r.t
      .client()
      .audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'gpt-4o-transcribe', language: 'en' })
      .withResponse();
    expect(data.text).toBe(fakeTranscript('transcribe', 'a.wav'));
    const usage = (data as unknown as { usage: { input_tokens: number; output_tokens: number; cost: number } }).usage;
    expect(usage).toMatchObject({ type: 'tokens', input_tokens: 14 });
    // gpt-4o-transcribe: $2.5 input, $10 output per million tokens.
    // The 14 input tokens are audio tokens ($6/M for gpt-4o-transcribe), the transcript is output ($10/M).
    expect(usage.cost).toBeCloseTo((14 * 6 + usage.output_tokens * 10) / 1e6, 12);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-gateway-provider')).toBe('alpha');
    expect(response.headers.get('x-gateway-model')).toBe('gpt-4o-transcribe');
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeCloseTo(usage.cost, 12);

    const sent = r.alpha.requests.at(-1);
    expect(sent?.path).toBe('/v1/audio/transcriptions');
    expect(sent?.headers.authorization).toBe(`Bearer ${ALPHA_SECRET}`);
    expect(String(sent?.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    const raw = r.alpha.rawBodies.at(-1) as Buffer;
    expect(raw.indexOf(AUDIO)).toBeGreaterThan(0);
    expect(formField(sent?.body, 'model')).toBe('gpt-4o-transcribe');
    expect(formField(sent?.body, 'language')).toBe('en');

    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({
      endpoint: '/v1/audio/transcriptions',
      modelRequested: 'gpt-4o-transcribe',
      model: 'gpt-4o-transcribe',
      provider: 'alpha',
      status: 200,
      stream: false,
      inputTokens: 14,
      outputTokens: usage.output_tokens,
      pricing: 'priced',
      attempts: 1,
    });
    // The audit row names the file, never stores the audio.
    expect(row.requestBody).toContain('a.wav');
    expect(row.requestBody).toContain(`${AUDIO.length} bytes`);
    expect(row.requestBody).not.toContain('RIFF');
  });

  it("transcription with response_format 'text': a plain text body with text/plain", async () => {
    const { data, response } = await r.t
      .client()
      .audio.transcriptions.create({ file: await toFile(AUDIO, 'b.wav'), model: 'whisper-1', response_format: 'text' })
      .withResponse();
    expect(data).toBe(`${fakeTranscript('transcribe', 'b.wav')}\n`);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('x-gateway-provider')).toBe('alpha');
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    // No usage in a text answer, and these bytes are no readable audio: priced by their size, estimated.
    expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', model: 'whisper-1', pricing: 'estimated', status: 200 });
    expect(row.costUsd).toBeGreaterThan(0);
    expect(row.responseBody).toBe(`${fakeTranscript('transcribe', 'b.wav')}\n`);
  });

  it('srt, vtt and verbose_json keep their shapes', async () => {
    const client = r.t.client();
    const srt = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'c.wav'), model: 'whisper-1', response_format: 'srt' });
    expect(srt).toBe(`1\n00:00:00,000 --> 00:00:03,320\n${fakeTranscript('transcribe', 'c.wav')}\n\n`);
    const vtt = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'c.wav'), model: 'whisper-1', response_format: 'vtt' });
    expect(vtt.startsWith('WEBVTT\n\n')).toBe(true);
    const verbose = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'c.wav'), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['segment'] });
    expect(verbose).toMatchObject({ task: 'transcribe', language: 'english', text: fakeTranscript('transcribe', 'c.wav') });
    expect(verbose.segments?.[0].start).toBe(0);
    expect(formField(r.alpha.requests.at(-1)?.body, 'timestamp_granularities\\[\\]')).toBe('segment');
  });

  it('whisper-1 reports a duration, not tokens: priced per minute ($0.006)', async () => {
    const { data, response } = await r.t.client().audio.transcriptions.create({ file: await toFile(AUDIO, 'd.wav'), model: 'whisper-1' }).withResponse();
    expect(data.text).toBe(fakeTranscript('transcribe', 'd.wav'));
    expect((data as unknown as { usage: unknown }).usage).toEqual({ type: 'duration', seconds: 3, cost: 0.0003 });
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.0003');
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ pricing: 'priced', costUsd: 0.0003, inputTokens: 0 });
  });

  it('translation', async () => {
    const { data, response } = await r.t.client().audio.translations.create({ file: await toFile(AUDIO, 'de.wav'), model: 'whisper-1' }).withResponse();
    expect(data.text).toBe(fakeTranscript('translate', 'de.wav'));
    expect(r.alpha.requests.at(-1)?.path).toBe('/v1/audio/translations');
    const text = await r.t.client().audio.translations.create({ file: await toFile(AUDIO, 'de.wav'), model: 'whisper-1', response_format: 'text' });
    expect(text).toBe(`${fakeTranscript('translate', 'de.wav')}\n`);
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    // A translation answer carries no duration and these bytes are no readable audio: priced by size, estimated.
    expect(row).toMatchObject({ endpoint: '/v1/audio/translations', modelRequested: 'whisper-1', model: 'whisper-1', provider: 'alpha', status: 200, pricing: 'estimated' });
  });

  it('provider/model: the model field is rewritten to the resolved name, every other byte kept', async () => {
    const { data, response } = await r.t.client().audio.transcriptions.create({ file: await toFile(AUDIO, 'e.wav'), model: 'beta/whisper-1' }).withResponse();
    expect(data.text).toBe(fakeTranscript('transcribe', 'e.wav'));
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-model')).toBe('whisper-1');
    const raw = r.beta.rawBodies.at(-1) as Buffer;
    expect(formField(r.beta.requests.at(-1)?.body, 'model')).toBe('whisper-1');
    expect(raw.indexOf(AUDIO)).toBeGreaterThan(0);
    expect(raw.includes('beta/whisper-1')).toBe(false);
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ modelRequested: 'beta/whisper-1', model: 'whisper-1', provider: 'beta' });
  });

  it('a transcription stream is relayed, and its usage priced for the audit row', async () => {
    const { data: stream, response } = await r.t
      .client()
      .audio.transcriptions.create({ file: await toFile(AUDIO, 'f.wav'), model: 'gpt-4o-transcribe', stream: true })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    let text = '';
    let done = '';
    for await (const ev of stream) {
      if (ev.type === 'transcript.text.delta') text += ev.delta;
      if (ev.type === 'transcript.text.done') done = ev.text;
    }
    expect(text).toBe(fakeTranscript('transcribe', 'f.wav'));
    expect(done).toBe(text);
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', stream: true, inputTokens: 14, pricing: 'priced', status: 200 });
    expect(row.costUsd).toBeGreaterThan(0);
  });

  it('400s name the missing file or model; a body that is not multipart is refused', async () => {
    const post = (body: FormData | string, headers: Record<string, string> = {}) =>
      fetch(`${r.t.baseUrl}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${r.t.key}`, ...headers }, body });
    const noFile = new FormData();
    noFile.set('model', 'whisper-1');
    let res = await post(noFile);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect((await errorOf(res)).error).toMatchObject({ param: 'file', code: 'missing_parameter', type: 'invalid_request_error' });
    expect(res.headers.get('x-request-id')).toBeTruthy();

    const noModel = new FormData();
    noModel.set('file', new Blob([AUDIO]), 'a.wav');
    res = await post(noModel);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({ param: 'model', code: 'missing_parameter' });

    res = await post(JSON.stringify({ model: 'whisper-1' }), { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error.code).toBe('invalid_content_type');

    const err = await apiError(r.t.client().audio.transcriptions.create({ model: 'whisper-1' } as unknown as OpenAI.Audio.TranscriptionCreateParamsNonStreaming));
    expect(err.status).toBe(400);
    expect(err.param).toBe('file');
  });

  it("the key's allow-list applies to audio too", async () => {
    const client = r.t.client({ apiKey: r.t.keys['whisper-only'] });
    const ok = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'g.wav'), model: 'whisper-1' });
    expect(ok.text).toBe(fakeTranscript('transcribe', 'g.wav'));
    const err = await apiError(client.audio.transcriptions.create({ file: await toFile(AUDIO, 'g.wav'), model: 'gpt-4o-transcribe' }));
    expect(err.status).toBe(403);
    expect(err.code).toBe('model_not_allowed');
  });
});

describe('failover', () => {
  let r: Rig | undefined;
  afterEach(async () => {
    if (r) await closeRig(r);
    r = undefined;
  });

  it('images: first provider 500, the second answers; both attempts recorded', async () => {
    r = await rig();
    r.alpha.queueFault({ kind: 'status', status: 500 });
    const { data, response } = await r.t.client().images.generate({ model: 'gpt-image-1', prompt: 'a fox' }).withResponse();
    expect(data.data?.[0].b64_json).toBe(FAKE_PNG_B64);
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row.attemptList.map((a) => [a.provider, a.status])).toEqual([
      ['alpha', 500],
      ['beta', 200],
    ]);
  });

  it('audio: first provider 500, the same multipart body goes to the second', async () => {
    r = await rig();
    r.alpha.queueFault({ kind: 'status', status: 500 });
    const { data, response } = await r.t.client().audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-1', response_format: 'text' }).withResponse();
    expect(data).toBe(`${fakeTranscript('transcribe', 'a.wav')}\n`);
    expect(response.headers.get('x-gateway-provider')).toBe('beta');
    expect(response.headers.get('x-gateway-attempts')).toBe('2');
    expect(r.alpha.rawBodies.at(-1)?.equals(r.beta.rawBodies.at(-1) as Buffer)).toBe(true);
    expect(r.beta.requests.at(-1)?.headers.authorization).toBe(`Bearer ${BETA_SECRET}`);
    const row = await auditRow(r.t, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', provider: 'beta', attempts: 2, status: 200 });
    expect(row.attemptList.map((a) => a.provider)).toEqual(['alpha', 'beta']);
  });

  it('audio: a connection reset fails over too', async () => {
    r = await rig();
    r.alpha.queueFault({ kind: 'reset' });
    const res = await r.t.client().audio.translations.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-1' });
    expect(res.text).toBe(fakeTranscript('translate', 'a.wav'));
    expect(r.beta.requests).toHaveLength(1);
  });

  it('an upstream 400 goes straight back to the client, no failover', async () => {
    r = await rig();
    const err = await apiError(r.t.client().audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-1', response_format: 'mp5' as 'json' }));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/response_format/);
    expect(r.beta.requests).toHaveLength(0);
  });
});

describe('size limit', () => {
  it('an upload over the body limit is a 413 and never reaches the provider', async () => {
    const up = await startOpenAIExtraUpstream({ models: ['whisper-1'] });
    const t = await startTestGateway({
      providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: ALPHA_SECRET, models: ['whisper-1'] }],
      settings: { bodyLimitBytes: 4096 },
    });
    try {
      const err = await apiError(t.client().audio.transcriptions.create({ file: await toFile(Buffer.alloc(64 * 1024, 1), 'big.wav'), model: 'whisper-1' }));
      expect(err.status).toBe(413);
      expect(err.code).toBe('request_too_large');
      const row = await auditRow(t, err.requestID);
      expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', status: 413 });
      expect(up.requests).toHaveLength(0);
    } finally {
      await t.close();
      await up.close();
    }
  });
});

describe('providers without these endpoints', () => {
  it('an Anthropic provider answers 400 unsupported_endpoint for images and audio', async () => {
    const up = await startAnthropicUpstream({ models: ['claude-sonnet-4-5'] });
    const t = await startTestGateway({ providers: [{ name: 'anth', type: 'anthropic', baseUrl: up.url, secret: 'sk-ant-test-0123456789', models: ['claude-sonnet-4-5'] }] });
    try {
      const img = await apiError(t.client().images.generate({ model: 'claude-sonnet-4-5', prompt: 'x' }));
      expect(img.status).toBe(400);
      expect(img.code).toBe('unsupported_endpoint');
      expect(img.message).toMatch(/anth \(type anthropic\).*\/v1\/images\/generations/);
      const audio = await apiError(t.client().audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'claude-sonnet-4-5' }));
      expect(audio.status).toBe(400);
      expect(audio.code).toBe('unsupported_endpoint');
      expect(up.requests).toHaveLength(0);
    } finally {
      await t.close();
      await up.close();
    }
  });

  it('a mixed alias skips the provider that cannot serve and uses the one that can', async () => {
    const anth = await startAnthropicUpstream({ models: ['whisper-1'] });
    const oa = await startOpenAIExtraUpstream({ models: ['whisper-1'] });
    const t = await startTestGateway({
      providers: [
        { name: 'anth', type: 'anthropic', baseUrl: anth.url, secret: 'sk-ant-test-0123456789', models: ['whisper-1'], priority: 1 },
        { name: 'oa', type: 'openai', baseUrl: oa.url, secret: ALPHA_SECRET, models: ['whisper-1'], priority: 50 },
      ],
    });
    try {
      const { data, response } = await t.client().audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-1' }).withResponse();
      expect(data.text).toBe(fakeTranscript('transcribe', 'a.wav'));
      expect(response.headers.get('x-gateway-provider')).toBe('oa');
      expect(anth.requests).toHaveLength(0);
    } finally {
      await t.close();
      await anth.close();
      await oa.close();
    }
  });
});
