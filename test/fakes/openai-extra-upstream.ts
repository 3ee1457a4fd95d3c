import { randomBytes } from 'node:crypto';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeServer } from './fault.ts';
import type { Exchange, FakeOptions, FakeUpstream, ProviderSpec, SseEvent } from './fault.ts';
import { openaiError, openaiErrorFor } from './openai-upstream.ts';
import { countWords, splitWords } from './scenario.ts';

// A fake OpenAI upstream for the endpoints beside chat: legacy /v1/completions (JSON and SSE),
// /v1/images/generations (b64_json or url), /v1/audio/transcriptions and /v1/audio/translations
// (multipart; json, verbose_json, text, srt, vtt, and a transcription stream), with the shapes of
// reference/protocol.md §3, §5 and §6. Built on startFakeServer, so every Fault applies.
//
// The shared fake server can only answer JSON or SSE, and the audio `text`/`srt`/`vtt` formats are a
// raw text body. So the spec answers those as a JSON string marked with RAW_TYPE_HEADER, and a thin
// pass-through front server turns that into the raw body with the real Content-Type. Everything else,
// faults included (resets, hangs, truncated bodies), passes through the front unchanged. The front
// also keeps each request body's exact bytes (the shared recorder decodes them as UTF-8).

const RAW_TYPE_HEADER = 'x-fake-raw-content-type';

export interface ExtraUpstream extends FakeUpstream {
  /** The exact bytes of each request body, in arrival order. */
  rawBodies: Buffer[];
}

export const EXTRA_MODELS = ['gpt-3.5-turbo-instruct', 'gpt-image-1', 'dall-e-3', 'whisper-1', 'gpt-4o-transcribe'];

/** A 1x1 transparent PNG, the image every generation returns. */
export const FAKE_PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

export async function startOpenAIExtraUpstream(options?: Partial<FakeOptions>): Promise<ExtraUpstream> {
  const inner = await startFakeServer(extraSpec, { models: [...EXTRA_MODELS], ...options });
  const rawBodies: Buffer[] = [];
  const agent = new Agent({ keepAlive: false });
  const front = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      rawBodies.push(body);
      const headers = { ...req.headers, host: `127.0.0.1:${inner.port}`, 'content-length': String(body.length) };
      delete headers['transfer-encoding'];
      const up = httpRequest({ host: '127.0.0.1', port: inner.port, method: req.method, path: req.url, headers, agent }, (ur) => {
        const rawType = ur.headers[RAW_TYPE_HEADER];
        const out = { ...ur.headers };
        delete out[RAW_TYPE_HEADER];
        ur.on('close', () => {
          if (!ur.complete) res.destroy();
        });
        if (typeof rawType !== 'string') {
          res.writeHead(ur.statusCode ?? 502, out);
          ur.pipe(res);
          return;
        }
        const parts: Buffer[] = [];
        ur.on('data', (c: Buffer) => parts.push(c));
        ur.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let raw: string;
          try {
            raw = String(JSON.parse(text));
          } catch {
            raw = text; // the `malformed` fault: garbage goes out as it is
          }
          delete out['content-length'];
          res.writeHead(ur.statusCode ?? 502, { ...out, 'content-type': rawType, 'content-length': Buffer.byteLength(raw) });
          res.end(raw);
        });
      });
      // The inner server reset or dropped the connection: do the same to the client.
      up.on('error', () => (res.socket ? res.socket.resetAndDestroy() : res.destroy()));
      res.on('close', () => {
        if (!res.writableEnded) up.destroy();
      });
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', () => resolve()));
  const port = (front.address() as AddressInfo).port;
  return {
    ...inner,
    url: `http://127.0.0.1:${port}${extraSpec.basePath}`,
    port,
    rawBodies,
    async close() {
      front.closeAllConnections();
      await Promise.all([new Promise<void>((resolve) => front.close(() => resolve())), inner.close()]);
      agent.destroy();
    },
  };
}

const extraSpec: ProviderSpec = {
  basePath: '/v1',
  defaultModels: EXTRA_MODELS,
  requestIdHeader: 'x-request-id',
  errorReply: (status) => openaiErrorFor(status),
  handle: async (x) => {
    const route = `${x.method} ${x.path}`;
    if (x.options.requireKey !== undefined && x.headers.authorization !== `Bearer ${x.options.requireKey}`) {
      return x.json(401, openaiErrorFor(401).body);
    }
    if (route === 'POST /v1/completions') return completions(x);
    if (route === 'POST /v1/images/generations') return images(x);
    if (route === 'POST /v1/audio/transcriptions') return audio(x, 'transcribe');
    if (route === 'POST /v1/audio/translations') return audio(x, 'translate');
    if (route === 'GET /v1/models') {
      return x.json(200, { object: 'list', data: x.options.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })) });
    }
    return x.json(404, openaiError(`Invalid URL (${x.method} ${x.path})`, 'invalid_request_error'));
  },
};

// ---- legacy completions (§3) ----

interface CompletionBody {
  model?: unknown;
  prompt?: unknown;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number;
  n?: number;
  echo?: boolean;
}

/** One completion per prompt: `Echo: <prompt>` (token prompts are echoed as their count). */
function completionTexts(prompt: unknown): { prompts: string[]; texts: string[] } {
  const list = Array.isArray(prompt) && prompt.length > 0 && !prompt.every((t) => typeof t === 'number') ? prompt : [prompt];
  const prompts = list.map((p) => (typeof p === 'string' ? p : Array.isArray(p) ? `${p.length} tokens` : String(p)));
  return { prompts, texts: prompts.map((p) => `Echo: ${p}`) };
}

async function completions(x: Exchange): Promise<void> {
  const body = x.body as CompletionBody;
  if (typeof body !== 'object' || body === null) return x.json(400, openaiError('We could not parse the JSON body of your request.', 'invalid_request_error'));
  if (typeof body.model !== 'string') return x.json(400, openaiError('you must provide a model parameter', 'invalid_request_error', 'model', 'missing_required_parameter'));
  if (body.prompt === undefined) return x.json(400, openaiError("Missing required parameter: 'prompt'.", 'invalid_request_error', 'prompt', 'missing_required_parameter'));
  if (x.options.rejectStreamOptions && 'stream_options' in body) {
    return x.json(400, openaiError('Unrecognized request argument supplied: stream_options', 'invalid_request_error', 'stream_options'));
  }
  const echoed = completionTexts(body.prompt);
  const prompts = echoed.prompts;
  // A talkative model (`longAnswers`) and `max_tokens` cut each completion; `n` completions per prompt.
  const n = typeof body.n === 'number' && body.n > 1 ? Math.floor(body.n) : 1;
  const texts = echoed.texts.flatMap((t) => {
    let text = t;
    const pad = x.options.longAnswers;
    if (pad !== undefined && countWords(text) < pad) text += ' lorem'.repeat(pad - countWords(text));
    if (typeof body.max_tokens === 'number' && countWords(text) > body.max_tokens) text = splitWords(text).slice(0, body.max_tokens).join('').trimEnd();
    return Array.from({ length: n }, () => text);
  });
  const promptTokens = prompts.reduce((n, p) => n + countWords(p), 0);
  const completionTokens = texts.reduce((n, t) => n + countWords(t), 0);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const id = `cmpl-${randomBytes(12).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, object: 'text_completion', created, model: body.model, system_fingerprint: 'fp_fake' };

  if (body.stream === true) {
    const withUsage = body.stream_options?.include_usage === true;
    const nullUsage = withUsage && x.options.usageOnEveryChunk ? { usage: null } : {};
    const events: SseEvent[] = [];
    texts.forEach((text, index) => {
      for (const piece of splitWords(text)) {
        events.push({ data: JSON.stringify({ ...base, choices: [{ text: piece, index, logprobs: null, finish_reason: null }], ...nullUsage }) });
      }
      events.push({ data: JSON.stringify({ ...base, choices: [{ text: '', index, logprobs: null, finish_reason: 'stop' }], ...nullUsage }) });
    });
    if (withUsage && !x.options.omitUsage) events.push({ data: JSON.stringify({ ...base, choices: [], usage }) });
    events.push({ data: '[DONE]' });
    return x.sse(events);
  }
  return x.json(200, {
    ...base,
    choices: texts.map((text, index) => ({ text, index, logprobs: null, finish_reason: 'stop' })),
    ...(x.options.omitUsage ? {} : { usage }),
  });
}

// ---- images (§5.1) ----

interface ImageBody {
  model?: unknown;
  prompt?: unknown;
  n?: number;
  response_format?: string;
  size?: string;
}

async function images(x: Exchange): Promise<void> {
  const body = x.body as ImageBody;
  if (typeof body !== 'object' || body === null) return x.json(400, openaiError('We could not parse the JSON body of your request.', 'invalid_request_error'));
  if (typeof body.prompt !== 'string') return x.json(400, openaiError("Missing required parameter: 'prompt'.", 'invalid_request_error', 'prompt', 'missing_required_parameter'));
  const model = typeof body.model === 'string' ? body.model : 'dall-e-2';
  const gptImage = model.startsWith('gpt-image');
  const n = typeof body.n === 'number' ? body.n : 1;
  // GPT image models always answer b64_json; dall-e answers URLs unless asked for b64_json.
  const b64 = gptImage || body.response_format === 'b64_json';
  const data = Array.from({ length: n }, (_, i) =>
    b64 ? { b64_json: FAKE_PNG_B64 } : { url: `https://images.fake/${x.requestId}/${i}.png`, ...(model === 'dall-e-3' ? { revised_prompt: `A picture of ${body.prompt}` } : {}) },
  );
  const created = Math.floor(Date.now() / 1000);
  if (!gptImage || x.options.omitUsage) return x.json(200, { created, data });
  const textTokens = countWords(body.prompt);
  const usage = { total_tokens: textTokens + 272 * n, input_tokens: textTokens, output_tokens: 272 * n, input_tokens_details: { text_tokens: textTokens, image_tokens: 0 } };
  return x.json(200, { created, data, background: 'opaque', output_format: 'png', size: body.size ?? '1024x1024', quality: 'low', usage });
}

// ---- audio (§6.1, §6.2) ----

interface FormPart {
  name: string;
  filename: string | null;
  value: string;
}

/** Independent of the gateway's own parser on purpose: this is what a real server would make of the body. */
function parseForm(contentType: string | undefined, body: string): FormPart[] | null {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? '');
  if (!m || !/^multipart\/form-data/i.test(contentType ?? '')) return null;
  const boundary = m[1] ?? m[2].trim();
  const parts: FormPart[] = [];
  for (const chunk of body.split(`--${boundary}`).slice(1)) {
    if (chunk.startsWith('--')) break;
    const sep = chunk.indexOf('\r\n\r\n');
    if (sep === -1) return null;
    const head = chunk.slice(0, sep);
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) return null;
    const filename = /filename="([^"]*)"/i.exec(head)?.[1] ?? null;
    parts.push({ name, filename, value: chunk.slice(sep + 4, chunk.length - 2) });
  }
  return parts;
}

export const fakeTranscript = (task: 'transcribe' | 'translate', filename: string) =>
  task === 'transcribe' ? `The beach was a popular spot (${filename}).` : `Hello, my name is Wolfgang (${filename}).`;

async function audio(x: Exchange, task: 'transcribe' | 'translate'): Promise<void> {
  const parts = parseForm(x.headers['content-type'], typeof x.body === 'string' ? x.body : '');
  if (!parts) return x.json(400, openaiError('Invalid Content-Type header, expected multipart/form-data.', 'invalid_request_error'));
  const field = (name: string) => parts.find((p) => p.name === name && p.filename === null)?.value;
  const file = parts.find((p) => p.name === 'file');
  if (!file) return x.json(400, openaiError("Missing required parameter: 'file'.", 'invalid_request_error', 'file', 'missing_required_parameter'));
  const model = field('model');
  if (!model) return x.json(400, openaiError('you must provide a model parameter', 'invalid_request_error', 'model', 'missing_required_parameter'));
  if (!x.options.models.includes(model)) return x.json(404, openaiErrorFor(404).body);
  const format = field('response_format') ?? 'json';
  const text = fakeTranscript(task, file.filename ?? 'file');
  const outputTokens = countWords(text);
  const tokenUsage = { type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 0, audio_tokens: 14 }, output_tokens: outputTokens, total_tokens: 14 + outputTokens };
  const usage = model === 'whisper-1' ? { type: 'duration', seconds: 3 } : tokenUsage;
  const omit = x.options.omitUsage === true;

  if (field('stream') === 'true' && model !== 'whisper-1') {
    const events: SseEvent[] = splitWords(text).map((delta) => ({ data: JSON.stringify({ type: 'transcript.text.delta', delta, logprobs: [] }) }));
    events.push({ data: JSON.stringify({ type: 'transcript.text.done', text, logprobs: [], ...(omit ? {} : { usage: tokenUsage }) }) });
    return x.sse(events);
  }
  const segment = { id: 0, seek: 0, start: 0, end: 3.32, text: ` ${text}`, tokens: [50364, 440, 7534], temperature: 0, avg_logprob: -0.28, compression_ratio: 1.23, no_speech_prob: 0.0098 };
  switch (format) {
    case 'json':
      return x.json(200, task === 'translate' || omit ? { text } : { text, usage });
    case 'verbose_json':
      return x.json(200, { task, language: 'english', duration: 3.32, text, segments: [segment], ...(omit ? {} : { usage: { type: 'duration', seconds: 4 } }) });
    case 'text':
      return x.json(200, `${text}\n`, { [RAW_TYPE_HEADER]: 'text/plain; charset=utf-8' });
    case 'srt':
      return x.json(200, `1\n00:00:00,000 --> 00:00:03,320\n${text}\n\n`, { [RAW_TYPE_HEADER]: 'text/plain; charset=utf-8' });
    case 'vtt':
      return x.json(200, `WEBVTT\n\n00:00:00.000 --> 00:00:03.320\n${text}\n\n`, { [RAW_TYPE_HEADER]: 'text/plain; charset=utf-8' });
    default:
      return x.json(400, openaiError(`Invalid value for 'response_format': ${format}.`, 'invalid_request_error', 'response_format', 'invalid_value'));
  }
}
