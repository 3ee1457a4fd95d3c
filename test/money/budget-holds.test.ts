/**
 * Budgets and TPM limits hold before the fact: many concurrent calls that name no `max_tokens`,
 * against fake upstreams that use all the output they may (up to `max_tokens`, else a long answer)
 * and honour `n`. What the fakes served, recomputed from the requests they received and priced at
 * list prices by hand, never exceeds the key's budget (or its TPM), and at least one call is served.
 */
import { toFile } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIUpstream, toScenario } from '../fakes/openai-upstream.ts';
import { fakeTranscript, startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { countWords, runScenario } from '../fakes/scenario.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { silentWav } from '../support/wav.ts';

// List prices (USD per million tokens) of the models used, from OpenAI's price page.
const MINI = { input: 0.15, output: 0.6 };
const EMBED = { input: 0.02 };
const INSTRUCT = { input: 1.5, output: 2 };
const TRANSCRIBE = { audio: 6, output: 10 };
const DALL_E_3_STANDARD_1024 = 0.04;
/** gpt-4o-mini stops at 16,384 output tokens; the fake answers 16,000 words when not told otherwise. */
const LONG = 16_000;

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

async function rig(keys: NonNullable<Parameters<typeof startTestGateway>[0]>['keys']): Promise<{ t: TestGateway; chat: FakeUpstream; extra: FakeUpstream }> {
  const chat = await startOpenAIUpstream({ models: ['gpt-4o-mini', 'text-embedding-3-small'], longAnswers: LONG });
  const extra = await startOpenAIExtraUpstream({ models: ['gpt-3.5-turbo-instruct', 'gpt-4o-transcribe', 'dall-e-3'], longAnswers: LONG });
  const t = await startTestGateway({
    providers: [
      { name: 'oai', type: 'openai', baseUrl: chat.url, secret: 'sk-fake-chat-0123456789', models: ['gpt-4o-mini', 'text-embedding-3-small'] },
      { name: 'extra', type: 'openai', baseUrl: extra.url, secret: 'sk-fake-extra-0123456789', models: ['gpt-3.5-turbo-instruct', 'gpt-4o-transcribe', 'dall-e-3'] },
    ],
    keys,
  });
  closers.push(() => chat.close(), () => extra.close(), () => t.close());
  return { t, chat, extra };
}

/** What a finished upstream exchange cost at list prices, recomputed from the request the fake got. */
function servedUsd(req: FakeUpstream['requests'][number]): { usd: number; tokens: number } {
  if (req.aborted) throw new Error('an upstream call was cut: its cost cannot be recomputed here');
  const body = req.body as Record<string, unknown>;
  if (req.path === '/v1/chat/completions') {
    const reply = runScenario({ ...toScenario(body), padToWords: LONG });
    const n = typeof body.n === 'number' ? body.n : 1;
    const out = reply.completionTokens * n;
    return { usd: (reply.promptTokens * MINI.input + out * MINI.output) / 1e6, tokens: reply.promptTokens + out };
  }
  if (req.path === '/v1/embeddings') {
    const inputs = Array.isArray(body.input) ? (body.input as string[]) : [body.input as string];
    const tokens = inputs.reduce((s, i) => s + countWords(i), 0);
    return { usd: (tokens * EMBED.input) / 1e6, tokens };
  }
  if (req.path === '/v1/completions') {
    const prompt = countWords(body.prompt as string);
    const words = Math.min(LONG, typeof body.max_tokens === 'number' ? body.max_tokens : LONG);
    const n = typeof body.n === 'number' ? body.n : 1;
    return { usd: (prompt * INSTRUCT.input + words * n * INSTRUCT.output) / 1e6, tokens: prompt + words * n };
  }
  if (req.path === '/v1/audio/transcriptions') {
    // The fake bills 14 audio tokens and the transcript's words.
    const out = countWords(fakeTranscript('transcribe', 'a.wav'));
    return { usd: (14 * TRANSCRIBE.audio + out * TRANSCRIBE.output) / 1e6, tokens: 14 + out };
  }
  if (req.path === '/v1/images/generations') {
    const n = typeof body.n === 'number' ? body.n : 1;
    return { usd: n * DALL_E_3_STANDARD_1024, tokens: 0 };
  }
  throw new Error(`unexpected upstream path ${req.path}`);
}

const total = (fakes: FakeUpstream[], pick: 'usd' | 'tokens') =>
  fakes.flatMap((f) => f.requests.filter((r) => r.method === 'POST')).reduce((s, r) => s + servedUsd(r)[pick], 0);

/** Runs a call, reporting how it ended: 'ok', or the HTTP status it was refused with. */
async function outcome(p: Promise<unknown>): Promise<'ok' | number> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (typeof status !== 'number') throw err;
    return status;
  }
}

describe('a budget holds under 200 concurrent mixed calls without max_tokens', () => {
  it('what the upstreams served never exceeds the budget, and calls are served', async () => {
    const BUDGET = 0.02;
    const { t, chat, extra } = await rig([{ name: 'small', budgetUsd: BUDGET, budgetPeriod: 'total' }]);
    const client = t.client({ timeout: 60_000 });
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < 200; i++) {
      const content = `Tell me a long story number ${i}`;
      switch (i % 5) {
        case 0:
          calls.push(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }));
          break;
        case 1:
          calls.push(
            (async () => {
              const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], stream: true, stream_options: { include_usage: true } });
              for await (const _ of stream) void _;
            })(),
          );
          break;
        case 2:
          calls.push(client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: content }));
          break;
        case 3:
          calls.push(client.embeddings.create({ model: 'text-embedding-3-small', input: [content, `${content} again`] }));
          break;
        default:
          calls.push(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], n: 3 }));
      }
    }
    const outcomes = await Promise.all(calls.map(outcome));
    const served = outcomes.filter((o) => o === 'ok').length;
    expect(served).toBeGreaterThan(0);
    // Refusals are 402s (the worst case did not fit), never 5xx.
    expect(outcomes.filter((o) => o !== 'ok' && o !== 402)).toEqual([]);
    const usd = total([chat, extra], 'usd');
    expect(usd).toBeGreaterThan(0);
    expect(usd).toBeLessThanOrEqual(BUDGET);

    // The 402 names the worst case and what remains.
    const refused = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one more' }] }).catch((e: unknown) => e);
    expect((refused as { status?: number }).status).toBe(402);
    expect(String((refused as Error).message)).toMatch(/could cost up to \$0\.00\d+.*\$0\.\d+ of its budget left|has used its budget/);
  }, 120_000);

  it('a call whose worst case does not fit gets a 402 that says which max_tokens would', async () => {
    const { t } = await rig([{ name: 'tiny', budgetUsd: 0.005, budgetPeriod: 'total' }]);
    const err = (await t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)) as Error & { status: number };
    expect(err.status).toBe(402);
    const fits = Number(/Set max_tokens to (\d+) or less/.exec(err.message)?.[1]);
    expect(fits).toBeGreaterThan(1000);
    expect(fits).toBeLessThan(16_384);
    const ok = await t.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: fits });
    expect(ok.usage?.completion_tokens).toBe(fits);
  });
});

describe('a TPM limit holds the same way', () => {
  it('100 concurrent calls with max_tokens 100 under --tpm 2000 are served within 2000 tokens', async () => {
    const { t, chat } = await rig([{ name: 'tpm', tpm: 2000 }]);
    const client = t.client();
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, i) => outcome(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `count to ${i}` }], max_tokens: 100 }))),
    );
    const served = outcomes.filter((o) => o === 'ok').length;
    expect(served).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o !== 'ok' && o !== 429)).toEqual([]);
    expect(total([chat], 'tokens')).toBeLessThanOrEqual(2000);
  });
});

describe('text-format transcriptions and images pay too', () => {
  it('40 concurrent gpt-4o-transcribe calls with response_format=text stay within the budget, and are recorded', async () => {
    const BUDGET = 0.005;
    const { t, extra } = await rig([{ name: 'audio', budgetUsd: BUDGET, budgetPeriod: 'total' }]);
    const client = t.client();
    // A real 3-second 16 kHz mono 16-bit WAV: its header says how long it plays.
    const audio = silentWav({ seconds: 3, sampleRate: 16_000, bitsPerSample: 16 });
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async () => outcome(client.audio.transcriptions.create({ file: await toFile(audio, 'a.wav'), model: 'gpt-4o-transcribe', response_format: 'text' }))),
    );
    const served = outcomes.filter((o) => o === 'ok').length;
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThan(40);
    expect(outcomes.filter((o) => o !== 'ok' && o !== 402)).toEqual([]);
    expect(total([extra], 'usd')).toBeLessThanOrEqual(BUDGET);
    t.flush();
    const store = t.openStore();
    try {
      const spent = store.db.prepare(`SELECT TOTAL(cost_usd) AS s, COUNT(*) AS n FROM calls WHERE status = 200`).get() as { s: number; n: number };
      expect(spent.n).toBe(served);
      // Every served call paid (an estimate from the file's 3 s: the text answer has no usage).
      expect(spent.s).toBeGreaterThan(0);
      expect(spent.s).toBeLessThanOrEqual(BUDGET);
    } finally {
      store.close();
    }
  });

  it('images: n x the per-image price is reserved and paid', async () => {
    const BUDGET = 0.1;
    const { t, extra } = await rig([{ name: 'img', budgetUsd: BUDGET, budgetPeriod: 'total' }]);
    const client = t.client();
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => outcome(client.images.generate({ model: 'dall-e-3', prompt: `a cat ${i}`, size: '1024x1024', quality: 'standard', n: 1 }))),
    );
    const served = outcomes.filter((o) => o === 'ok').length;
    expect(served).toBe(2);
    expect(total([extra], 'usd')).toBeLessThanOrEqual(BUDGET);
    const res = await fetch(`${t.baseUrl}/balance`, { headers: { authorization: `Bearer ${t.key}` } });
    const balance = (await res.json()) as { used: number; remain: number };
    expect(balance.used).toBe(0.08);
    expect(balance.remain).toBe(0.02);
  });
});
