/**
 * `gateway prices set` can price every kind of call, and what it sets is charged: audio per minute
 * and images per image (the 403 `model_unpriced` says to set them), token rates with a long-context
 * tier. `gateway prices list --all` shows each rate with its source.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import type { ExtraUpstream } from '../fakes/openai-extra-upstream.ts';
import { auditRow } from '../support/call-checks.ts';
import { CLI_TEST_TIMEOUT_MS, runCli, tempHome } from '../support/cli.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { silentWav } from '../support/wav.ts';

/** 60 seconds of 8 kHz mono 8-bit audio. */
const wav60 = silentWav({ seconds: 60, sampleRate: 8000, bitsPerSample: 8 });

// Model ids the bundled price data does not know, served by an OpenAI-compatible host.
const MODELS = ['my-whisper', 'my-painter', 'gpt-3.5-turbo-instruct'];

let up: ExtraUpstream;
let t: TestGateway;

beforeAll(async () => {
  up = await startOpenAIExtraUpstream({ models: [...MODELS, 'whisper-1', 'dall-e-3'] });
  t = await startTestGateway({
    providers: [{ name: 'local', type: 'openai-compatible', baseUrl: up.url, models: MODELS }],
    keys: [{ name: 'budgeted', budgetUsd: 5, budgetPeriod: 'monthly' }],
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await up?.close();
});

async function waitForPrice(model: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (t.gw.deps.prices.lookup('openai-compatible', null, model)?.source === 'user') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the gateway did not pick up the price of ${model}`);
}

describe('prices set for audio and images', () => {
  it('unpriced until set (403 naming the flags), then charged per minute: 60 s at $0.01/min = $0.01', async () => {
    const client = t.client();
    const before = await client.audio.transcriptions.create({ file: await toFile(wav60, 'a.wav'), model: 'my-whisper', response_format: 'text' }).catch((e: unknown) => e as { status: number; message: string });
    expect((before as { status: number }).status).toBe(403);
    expect((before as { message: string }).message).toContain('--per-minute');

    const set = await runCli(['prices', 'set', 'my-whisper', '--per-minute', '0.01'], { home: t.home });
    expect(set.code, set.stderr).toBe(0);
    await waitForPrice('my-whisper');
    // The fake only serves models it lists: it lists these ids as whisper-like in text format.
    const { response } = await client.audio.transcriptions.create({ file: await toFile(wav60, 'a.wav'), model: 'my-whisper', response_format: 'text' }).withResponse();
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.01');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.costUsd).toBe(0.01);
    expect(row.pricing).toBe('priced');
    expect(row.priceVersion).toBe('user');
  }, CLI_TEST_TIMEOUT_MS);

  it('images: charged per image once set ($0.05 x 2)', async () => {
    const set = await runCli(['prices', 'set', 'my-painter', '--per-image', '0.05'], { home: t.home });
    expect(set.code, set.stderr).toBe(0);
    await waitForPrice('my-painter');
    const { response } = await t.client().images.generate({ model: 'my-painter', prompt: 'a fox', n: 2 }).withResponse();
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.1');
    const row = await auditRow(t, response.headers.get('x-request-id'));
    expect(row.costUsd).toBe(0.1);
  }, CLI_TEST_TIMEOUT_MS);

  it('prices list shows every kind of rate with its source', async () => {
    const set = await runCli(['prices', 'set', 'gpt-3.5-turbo-instruct', '--input', '1', '--output', '2', '--cache-write-1h', '3', '--audio-input', '4', '--tier-above', '1000', '--tier-input', '5', '--tier-output', '6', '--priority', '1.5'], { home: t.home });
    expect(set.code, set.stderr).toBe(0);
    const list = await runCli(['prices', 'list', '--json'], { home: t.home });
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
    const instruct = rows.find((r) => r.model === 'gpt-3.5-turbo-instruct');
    expect(instruct).toMatchObject({
      source: 'user',
      input_per_mtok: 1,
      output_per_mtok: 2,
      cache_write_1h_per_mtok: 3,
      audio_input_per_mtok: 4,
      tiers: [{ above_tokens: 1000, input_per_mtok: 5, output_per_mtok: 6 }],
      service_tier_multipliers: { priority: 1.5, flex: 0.5 },
    });
    expect(rows.find((r) => r.model === 'my-whisper')).toMatchObject({ source: 'user', per_minute_usd: 0.01 });
    // Nothing is stale yet; everything is with --stale 0.
    expect(JSON.parse((await runCli(['prices', 'list', '--json', '--stale', '1'], { home: t.home })).stdout)).toEqual([]);
    expect((await runCli(['prices', 'list', '--stale', '1'], { home: t.home })).stderr).toContain('None of your prices is older than 1 day');
    // --all lists every model the provider serves, one nothing prices included, so it can be found.
    const all = JSON.parse((await runCli(['prices', 'list', '--json', '--all'], { home: t.home })).stdout) as Array<Record<string, unknown>>;
    for (const model of MODELS) expect(all.some((r) => r.model === model)).toBe(true);
    const fresh = tempHome('gw-prices-');
    try {
      const add = await runCli(['providers', 'add', 'other', '--type', 'openai-compatible', '--base-url', 'http://127.0.0.1:9/v1', '--models', 'nobody-prices-me', '--key-env', 'OTHER_KEY'], { home: fresh.home });
      expect(add.code, add.stderr).toBe(0);
      const listed = JSON.parse((await runCli(['prices', 'list', '--json', '--all'], { home: fresh.home })).stdout) as Array<Record<string, unknown>>;
      expect(listed).toEqual([expect.objectContaining({ model: 'nobody-prices-me', provider: 'other', input_per_mtok: null, output_per_mtok: null })]);
      expect(String(listed[0].source)).toMatch(/^none: unpriced/);
    } finally {
      fresh.cleanup();
    }
  }, CLI_TEST_TIMEOUT_MS);
});
