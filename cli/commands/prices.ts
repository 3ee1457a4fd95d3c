/**
 * `gateway prices ...`: your own price for a model (USD per million tokens, per minute of audio, per
 * image), which wins over the bundled data; and the rates in force for the models your providers
 * serve, with where each came from, so stale ones can be found.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { PriceBook } from '../../core/pricing/price-book.ts';
import type { ModelPrice } from '../../core/pricing/price.ts';
import { fromStoredPrice } from '../../core/pricing/stored-price.ts';
import type { PriceExtra } from '../../core/storage/prices-repo.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';
import { CliError, usageError } from '../cli-error.ts';
import { note, printJson, table, withStore } from '../context.ts';

const rate = z.coerce.number().finite().min(0);
const setSchema = z
  .object({
    input: rate.optional(),
    output: rate.optional(),
    cacheRead: rate.optional(),
    cacheWrite: rate.optional(),
    cacheWrite1h: rate.optional(),
    audioInput: rate.optional(),
    audioOutput: rate.optional(),
    imageInput: rate.optional(),
    imageOutput: rate.optional(),
    perMinute: rate.optional(),
    perImage: rate.optional(),
    priority: rate.optional(),
    flex: rate.optional(),
    maxOutput: z.coerce.number().int().positive().optional(),
    tierAbove: z.coerce.number().int().positive().optional(),
    tierInput: rate.optional(),
    tierOutput: rate.optional(),
  })
  .refine((p) => p.input !== undefined || p.output !== undefined || p.perMinute !== undefined || p.perImage !== undefined, {
    message: 'give at least --input/--output (per million tokens), --per-minute or --per-image',
  });

/** `price` is null for a served model nothing prices (listed by `--all`, so it can be found). */
type Row = { model: string; provider: string; source: string; updated: string | null; price: ModelPrice | null };

export function registerPrices(program: Command): void {
  const prices = program.command('prices').description('model prices: your own (override the bundled data), and the rates in force');

  prices
    .command('set <model>')
    .description('set a model\'s price (USD per million tokens unless said otherwise)')
    .option('--input <usd>', 'input price per million tokens (default 0)')
    .option('--output <usd>', 'output price per million tokens (default 0)')
    .option('--cache-read <usd>', 'cached input price per million tokens')
    .option('--cache-write <usd>', 'cache write (5-minute) price per million tokens')
    .option('--cache-write-1h <usd>', '1-hour cache write price per million tokens (default 2x input)')
    .option('--audio-input <usd>', 'audio input tokens, per million')
    .option('--audio-output <usd>', 'audio output tokens, per million')
    .option('--image-input <usd>', 'image input tokens, per million')
    .option('--image-output <usd>', 'image output tokens, per million')
    .option('--per-minute <usd>', 'USD per minute of audio (transcriptions without token usage)')
    .option('--per-image <usd>', 'USD per image generated (without token usage)')
    .option('--priority <x>', 'multiplier for service_tier "priority" (default 2)')
    .option('--flex <x>', 'multiplier for service_tier "flex" (default 0.5)')
    .option('--max-output <tokens>', "the model's output limit (the worst case of a call without max_tokens)")
    .option('--tier-above <tokens>', 'a long-context tier: prompts above this many tokens pay --tier-input/--tier-output for the whole call')
    .option('--tier-input <usd>', 'input price per million tokens above --tier-above')
    .option('--tier-output <usd>', 'output price per million tokens above --tier-above')
    .action(async (model: string, opts: Record<string, string>) => {
      const parsed = setSchema.safeParse(opts);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw usageError(issue?.path.length ? `prices must be numbers >= 0 (--${issue.path.join('.').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)})` : `${issue?.message}`);
      }
      const p = parsed.data;
      const extra: PriceExtra = {
        cacheWrite1hPerMtok: p.cacheWrite1h,
        audioInputPerMtok: p.audioInput,
        audioOutputPerMtok: p.audioOutput,
        imageInputPerMtok: p.imageInput,
        imageOutputPerMtok: p.imageOutput,
        perMinuteUsd: p.perMinute,
        perImageUsd: p.perImage,
        priorityMultiplier: p.priority,
        flexMultiplier: p.flex,
        maxOutputTokens: p.maxOutput,
        tierAbove: p.tierAbove,
        tierInputPerMtok: p.tierInput,
        tierOutputPerMtok: p.tierOutput,
      };
      await withStore(async (store) => {
        await store.prices.set(model, { inputPerMtok: p.input ?? 0, outputPerMtok: p.output ?? 0, cacheReadPerMtok: p.cacheRead ?? null, cacheWritePerMtok: p.cacheWrite ?? null, extra });
        const parts = [
          p.input !== undefined || p.output !== undefined ? `$${p.input ?? 0} in / $${p.output ?? 0} out per million tokens` : null,
          p.perMinute !== undefined ? `$${p.perMinute} per minute` : null,
          p.perImage !== undefined ? `$${p.perImage} per image` : null,
        ].filter((x) => x !== null);
        note(`Price for ${model} set: ${parts.join(', ')}.`);
      });
    });

  prices
    .command('list', { isDefault: true })
    .description("your prices, and with --all the rates in force for every model your providers list, with their source")
    .option('--all', 'also the bundled rates of the models your providers serve')
    .option('--stale <days>', 'only your prices not updated for this many days')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean; all?: boolean; stale?: string }) => {
      const staleDays = opts.stale === undefined ? null : Number(opts.stale);
      if (staleDays !== null && !(Number.isFinite(staleDays) && staleDays >= 0)) throw usageError('--stale takes a number of days');
      await withStore(async (store) => {
        let rows = await priceRows(store, opts.all === true);
        if (staleDays !== null) rows = rows.filter((r) => r.updated !== null && Date.parse(r.updated) < Date.now() - staleDays * 86_400_000);
        if (opts.json) {
          return printJson(rows.map((r) => ({ model: r.model, provider: r.provider, source: r.source, updated: r.updated, ...describe(r.price) })));
        }
        if (rows.length === 0) {
          if (staleDays !== null) return note(`None of your prices is older than ${staleDays} day${staleDays === 1 ? '' : 's'}.`);
          return note(opts.all ? 'No models found: add a provider, or `gateway providers refresh`.' : 'No prices of your own; the bundled price data applies (see `gateway prices list --all`).');
        }
        table(
          ['MODEL', 'PROVIDER', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'OTHER', 'SOURCE', 'UPDATED'],
          rows.map((r) => {
            const d = describe(r.price);
            const n = (v: unknown): number | null => (typeof v === 'number' ? v : null);
            return [r.model, r.provider, n(d.input_per_mtok), n(d.output_per_mtok), n(d.cache_read_per_mtok), n(d.cache_write_per_mtok), otherRates(d), r.source, r.updated?.slice(0, 10) ?? '-'];
          }),
        );
      });
    });

  prices
    .command('remove <model>')
    .action(async (model: string) => {
      await withStore(async (store) => {
        if (!(await store.prices.list()).some((p) => p.model === model)) throw new CliError(`No price of yours for ${model}.`);
        await store.prices.remove(model);
        note(`Price for ${model} removed.`);
      });
    });
}

/** Your prices first, then (with `all`) each provider's listed models as the gateway would price them. */
async function priceRows(store: GatewayState, all: boolean): Promise<Row[]> {
  const book = new PriceBook();
  const mine = await store.prices.list();
  book.setUserPrices(Object.fromEntries(mine.map((p) => [p.model, fromStoredPrice(p)])));
  const rows: Row[] = mine.map((p) => ({ model: p.model, provider: '*', source: 'user', updated: new Date(p.updatedAt).toISOString(), price: book.lookup('openai', null, p.model)! }));
  if (!all) return rows;
  // Every model a provider serves, its fixed list or the one discovered from it; one without a price says so.
  const served = await store.providers.allServedModels();
  for (const provider of (await store.providers.list())) {
    for (const model of served.get(provider.name) ?? []) {
      const price = book.lookup(provider.type, provider.preset, model);
      if (price === null) {
        rows.push({ model, provider: provider.name, source: 'none: unpriced (`gateway prices set MODEL ...`)', updated: null, price: null });
        continue;
      }
      if (price.source === 'user') continue;
      const source = price.source === 'bundled' ? book.dataVersion() : price.source === 'builtin' ? 'builtin (gateway table, 2026-11)' : price.source;
      rows.push({ model, provider: provider.name, source, updated: null, price });
    }
  }
  return rows;
}

function describe(p: ModelPrice | null): Record<string, unknown> {
  return {
    input_per_mtok: p?.inputPerMTok ?? null,
    output_per_mtok: p?.outputPerMTok ?? null,
    cache_read_per_mtok: p?.cacheReadPerMTok ?? null,
    cache_write_per_mtok: p?.cacheWritePerMTok ?? null,
    cache_write_1h_per_mtok: p?.cacheWrite1hPerMTok ?? null,
    audio_input_per_mtok: p?.audioInputPerMTok ?? null,
    audio_output_per_mtok: p?.audioOutputPerMTok ?? null,
    image_input_per_mtok: p?.imageInputPerMTok ?? null,
    image_output_per_mtok: p?.imageOutputPerMTok ?? null,
    per_minute_usd: p?.perMinuteUsd ?? null,
    per_image_usd: p?.perImageUsd ?? null,
    service_tier_multipliers: p?.serviceTierMultipliers ?? null,
    tiers: p?.tiers?.map((t) => ({ above_tokens: t.above, input_per_mtok: t.inputPerMTok, output_per_mtok: t.outputPerMTok })) ?? [],
    max_output_tokens: p?.maxOutputTokens ?? null,
  };
}

function otherRates(d: Record<string, unknown>): string {
  const out: string[] = [];
  if (d.cache_write_1h_per_mtok !== null) out.push(`1h-write ${String(d.cache_write_1h_per_mtok)}`);
  if (d.audio_input_per_mtok !== null) out.push(`audio-in ${String(d.audio_input_per_mtok)}`);
  if (d.audio_output_per_mtok !== null) out.push(`audio-out ${String(d.audio_output_per_mtok)}`);
  if (d.image_input_per_mtok !== null) out.push(`image-in ${String(d.image_input_per_mtok)}`);
  if (d.per_minute_usd !== null) out.push(`$${String(d.per_minute_usd)}/min`);
  if (d.per_image_usd !== null) out.push(`per-image ${JSON.stringify(d.per_image_usd)}`);
  for (const t of d.tiers as Array<{ above_tokens: number; input_per_mtok: number; output_per_mtok: number }>) out.push(`>${t.above_tokens}: ${t.input_per_mtok}/${t.output_per_mtok}`);
  return out.join(', ') || '-';
}
