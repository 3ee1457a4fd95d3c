/** `gateway aliases ...`: one name for ordered targets, each under its provider's own model id. */
import type { Command } from 'commander';
import { STRATEGIES } from '../../core/routing/strategy.ts';
import type { Strategy } from '../../core/routing/strategy.ts';
import { CliError, usageError } from '../cli-error.ts';
import { note, parseList, printJson, table, withStore } from '../context.ts';

export function registerAliases(program: Command): void {
  const aliases = program.command('aliases').description('names that map to models on one or more providers');

  aliases
    .command('set <name> <targets>')
    .description('map NAME to provider/model[,provider/model...], tried in that order (or by --strategy)')
    .option('--strategy <s>', STRATEGIES.join('|'), 'priority')
    .action(async (name: string, targetsArg: string, opts: { strategy: string }) => {
      if (!(STRATEGIES as readonly string[]).includes(opts.strategy)) throw usageError(`--strategy must be one of ${STRATEGIES.join(', ')}`);
      const targets = (parseList(targetsArg) ?? []).map((t) => {
        const slash = t.indexOf('/');
        if (slash <= 0 || slash === t.length - 1) throw usageError(`target "${t}" must be provider/model`);
        return { provider: t.slice(0, slash), model: t.slice(slash + 1) };
      });
      if (targets.length === 0) throw usageError('give at least one provider/model target');
      await withStore(async (store) => {
        for (const t of targets) {
          if (!(await store.providers.get(t.provider))) throw new CliError(`No provider named "${t.provider}"; add it with \`gateway providers add ${t.provider} ...\`.`);
        }
        await store.aliases.set(name, targets, opts.strategy as Strategy);
        note(`Alias "${name}" → ${targets.map((t) => `${t.provider}/${t.model}`).join(', ')} (${opts.strategy}).`);
      });
    });

  aliases
    .command('list')
    .description('list aliases')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withStore(async (store) => {
        const list = await store.aliases.list();
        if (opts.json) return printJson(list);
        if (list.length === 0) return note('No aliases. Add one with `gateway aliases set NAME provider/model,...`.');
        table(['NAME', 'STRATEGY', 'TARGETS'], list.map((a) => [a.name, a.strategy, a.targets.map((t) => `${t.provider}/${t.model}`).join(', ')]));
      });
    });

  aliases
    .command('remove <name>')
    .description('remove an alias')
    .action(async (name: string) => {
      await withStore(async (store) => {
        if (!(await store.aliases.get(name))) throw new CliError(`No alias named "${name}".`);
        await store.aliases.remove(name);
        note(`Alias "${name}" removed.`);
      });
    });
}
