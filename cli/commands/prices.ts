/** `gateway prices ...`: your own price for a model the bundled data does not know (USD per million tokens). */
import type { Command } from 'commander';
import { z } from 'zod';
import { CliError, usageError } from '../cli-error.ts';
import { note, printJson, table, withStore } from '../context.ts';

const rate = z.coerce.number().finite().min(0);
const setSchema = z.object({ input: rate, output: rate, cacheRead: rate.optional(), cacheWrite: rate.optional() });

export function registerPrices(program: Command): void {
  const prices = program.command('prices').description('your own model prices (override the bundled data)');

  prices
    .command('set <model>')
    .description('set USD per million tokens for a model id')
    .requiredOption('--input <usd>', 'input price per million tokens')
    .requiredOption('--output <usd>', 'output price per million tokens')
    .option('--cache-read <usd>', 'cached input price per million tokens')
    .option('--cache-write <usd>', 'cache write price per million tokens')
    .action(async (model: string, opts: Record<string, string>) => {
      const parsed = setSchema.safeParse(opts);
      if (!parsed.success) throw usageError(`prices must be numbers >= 0 (${parsed.error.issues[0]?.path.join('.')})`);
      const p = parsed.data;
      await withStore((store) => {
        store.prices.set(model, { inputPerMtok: p.input, outputPerMtok: p.output, cacheReadPerMtok: p.cacheRead ?? null, cacheWritePerMtok: p.cacheWrite ?? null });
        note(`Price for ${model} set: $${p.input} in / $${p.output} out per million tokens.`);
      });
    });

  prices
    .command('list')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withStore((store) => {
        const list = store.prices.list();
        if (opts.json) return printJson(list);
        if (list.length === 0) return note('No prices of your own; the bundled price data applies.');
        table(['MODEL', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE'], list.map((p) => [p.model, p.inputPerMtok, p.outputPerMtok, p.cacheReadPerMtok, p.cacheWritePerMtok]));
      });
    });

  prices
    .command('remove <model>')
    .action(async (model: string) => {
      await withStore((store) => {
        if (!store.prices.list().some((p) => p.model === model)) throw new CliError(`No price of yours for ${model}.`);
        store.prices.remove(model);
        note(`Price for ${model} removed.`);
      });
    });
}
