/** `gateway keys ...`: local keys, one per tool. The secret is printed once, alone on stdout. */
import type { Command } from 'commander';
import { z } from 'zod';
import { formatCassetteSpec, parseCassetteSpec } from '../../core/cassettes/mode.ts';
import type { StoredKey } from '../../core/storage/keys-repo.ts';
import { KEY_NAME_PATTERN, KEY_NAME_RULE } from '../../core/storage/keys-repo.ts';
import type { CallQueries } from '../../core/state/gateway-state.ts';
import { periodStart } from '../../core/gateway/budget.ts';
import { formatUsd } from '../../core/pricing/cost.ts';
import { keySpendFigures, spendPeriod } from '../../core/keys/key-spend.ts';
import type { KeySpend } from '../../core/keys/key-spend.ts';
import { CliError, usageError } from '../cli-error.ts';
import { note, out, parseList, printJson, table, withStore } from '../context.ts';

const limitsSchema = z.object({
  // The message on coerce itself too: `--budget abc` coerces to NaN, which fails the type check first.
  budget: z.coerce.number({ message: '--budget must be a positive number of USD' }).positive('--budget must be a positive number of USD').optional(),
  period: z.enum(['total', 'daily', 'monthly'], { message: '--period must be total, daily or monthly' }).optional(),
  rpm: z.coerce.number({ message: '--rpm must be a positive integer' }).int('--rpm must be a positive integer').positive('--rpm must be a positive integer').optional(),
  tpm: z.coerce.number({ message: '--tpm must be a positive integer' }).int('--tpm must be a positive integer').positive('--tpm must be a positive integer').optional(),
  models: z.string().optional(),
});

function parseLimits(opts: Record<string, unknown>) {
  const parsed = limitsSchema.safeParse(opts);
  if (!parsed.success) throw usageError(parsed.error.issues[0]?.message ?? 'invalid option');
  const o = parsed.data;
  if (o.period && o.budget === undefined) throw usageError('--period needs --budget');
  return { budgetUsd: o.budget, budgetPeriod: o.period ?? (o.budget !== undefined ? 'total' : undefined), rpm: o.rpm, tpm: o.tpm, models: parseList(o.models) };
}

/** A key's cassette as stored: the mode and an absolute directory (the gateway may run elsewhere). */
function cassetteSpec(spec: string): string {
  try {
    return formatCassetteSpec(parseCassetteSpec(spec));
  } catch (err) {
    throw usageError(`--cassette: ${(err as Error).message}`);
  }
}

function checkName(name: string): string {
  if (!KEY_NAME_PATTERN.test(name)) throw usageError(`key name "${name}" ${KEY_NAME_RULE}`);
  return name;
}

/** What a key spent in its budget's period (today for a key without a budget), and what is left. */
export async function keySpend(calls: CallQueries, k: StoredKey): Promise<KeySpend> {
  return keySpendFigures(k, await calls.spendForKey(k.id, periodStart(spendPeriod(k))));
}

export function keyJson(k: StoredKey) {
  return {
    name: k.name,
    prefix: k.prefix,
    state: k.state,
    created_at: new Date(k.createdAt).toISOString(),
    rotated_at: k.rotatedAt ? new Date(k.rotatedAt).toISOString() : null,
    budget_usd: k.budgetUsd,
    budget_period: k.budgetPeriod,
    rpm: k.rpm,
    tpm: k.tpm,
    models: k.models,
    cassette: k.cassette,
  };
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('local API keys, one per tool');

  keys
    .command('create')
    .description('create a key; prints it once on stdout')
    .requiredOption('--name <name>', 'a name for the tool that will use it')
    .option('--budget <usd>', 'spend limit in USD')
    .option('--period <period>', 'budget period: total, daily or monthly (default total)')
    .option('--rpm <n>', 'requests per minute')
    .option('--tpm <n>', 'tokens per minute')
    .option('--models <a,b>', 'allow only these models')
    .action(async (opts: Record<string, string>) => {
      const name = checkName(opts.name);
      const limits = parseLimits(opts);
      if (opts.models !== undefined && !limits.models?.length) throw usageError('--models needs at least one model name (leave it out to allow every model)');
      await withStore(async (store) => {
        if ((await store.keys.list({ includeDeleted: false })).some((k) => k.name === name)) {
          throw new CliError(`A key named "${name}" already exists. Pick another name, or \`gateway keys rotate ${name}\` for a new secret for it (\`gateway keys list\` shows them).`);
        }
        const issued = await store.keys.create({ name, ...limits });
        out(issued.secret);
        note(`Key "${name}" created. It is shown only this once; store it in your tool's settings.`);
      });
    });

  keys
    .command('list')
    .description('list keys')
    .option('--all', 'include deleted keys')
    .option('--json', 'print JSON')
    .action(async (opts: { all?: boolean; json?: boolean }) => {
      await withStore(async (store) => {
        const list = await store.keys.list({ includeDeleted: opts.all === true });
        if (opts.json) return printJson(await Promise.all(list.map(async (k) => ({ ...keyJson(k), ...(await keySpend(store.calls, k)) }))));
        if (list.length === 0) return note('No keys yet. Create one with `gateway keys create --name mytool`.');
        const spends = await Promise.all(list.map((k) => keySpend(store.calls, k)));
        table(
          ['NAME', 'KEY', 'STATE', 'SPENT / BUDGET', 'USED', 'RPM', 'TPM', 'MODELS'],
          list.map((k, i) => {
            const s = spends[i];
            const spent = `$${formatUsd(s.spent_usd)}`;
            return [
              k.name,
              `${k.prefix}…`,
              k.state,
              k.budgetUsd !== null ? `${spent} / $${formatUsd(k.budgetUsd)} ${s.spent_period}` : `${spent} today (no budget)`,
              k.budgetUsd !== null ? (k.budgetUsd > 0 ? `${Math.round((s.spent_usd / k.budgetUsd) * 100)}%` : 'spent') : null,
              k.rpm,
              k.tpm,
              k.models?.join(','),
            ];
          }),
        );
      });
    });

  const stateChange = (cmd: string, description: string, apply: (store: Parameters<Parameters<typeof withStore>[0]>[0], name: string) => void, done: string) =>
    keys
      .command(`${cmd} <name>`)
      .description(description)
      .action(async (name: string) => {
        await withStore(async (store) => {
          apply(store, name);
          note(`Key "${name}" ${done}.`);
        });
      });
  stateChange('disable', 'stop a key from working (reversible)', (s, n) => s.keys.setState(n, 'disabled'), 'disabled');
  stateChange('enable', 'let a disabled key work again', (s, n) => s.keys.setState(n, 'active'), 'enabled');
  stateChange('delete', 'delete a key (its calls stay in the audit log)', (s, n) => s.keys.delete(n), 'deleted');

  keys
    .command('rotate <name>')
    .description('issue a new secret for a key (same name, limits and history); the old one stops working')
    .action(async (name: string) => {
      await withStore(async (store) => {
        const issued = await store.keys.rotate(name);
        out(issued.secret);
        note(`Key "${name}" rotated; the old secret no longer works.`);
      });
    });

  keys
    .command('update <name>')
    .description("change a key's limits")
    .option('--budget <usd>', 'spend limit in USD')
    .option('--no-budget', 'remove the spend limit')
    .option('--period <period>', 'budget period: total, daily or monthly')
    .option('--rpm <n>', 'requests per minute')
    .option('--tpm <n>', 'tokens per minute')
    .option('--models <a,b>', 'allow only these models (empty: all)')
    .option('--cassette <mode:dir>', "record or replay this key's calls: record:DIR, replay:DIR or replay-or-record:DIR")
    .option('--no-cassette', "back to the gateway's own record/replay setting")
    .action(async (name: string, opts: Record<string, unknown>) => {
      const cassette = opts.cassette === undefined ? undefined : opts.cassette === false ? null : cassetteSpec(String(opts.cassette));
      const removeBudget = opts.budget === false;
      const limits = parseLimits({ ...opts, budget: removeBudget ? undefined : opts.budget, period: opts.period ?? (opts.budget !== undefined && !removeBudget ? 'total' : undefined) });
      await withStore(async (store) => {
        const patch: Record<string, unknown> = {};
        if (removeBudget) patch.budgetUsd = null;
        else if (limits.budgetUsd !== undefined) patch.budgetUsd = limits.budgetUsd;
        if (opts.period !== undefined) patch.budgetPeriod = limits.budgetPeriod;
        if (limits.rpm !== undefined) patch.rpm = limits.rpm;
        if (limits.tpm !== undefined) patch.tpm = limits.tpm;
        if (opts.models !== undefined) patch.models = limits.models && limits.models.length > 0 ? limits.models : null;
        await store.keys.update(name, patch);
        if (cassette !== undefined) (await store.keys.setCassette(name, cassette));
        note(`Key "${name}" updated.`);
      });
    });
}
