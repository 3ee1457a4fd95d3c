/** The `gateway` command. Exit codes: 0 success, 1 failure, 2 bad usage. */
import { Command, CommanderError } from 'commander';
import { StorageError } from '../core/storage/db.ts';
import { KeychainUnavailableError } from '../core/secrets/secret-store.ts';
import { TeamConfigError } from '../core/state/team-urls.ts';
import { CliError } from './cli-error.ts';
import { packageVersion } from './package-info.ts';
import { registerAliases } from './commands/aliases.ts';
import { registerCassettes } from './commands/cassettes.ts';
import { registerEnv } from './commands/env.ts';
import { registerInit } from './commands/init.ts';
import { registerKeys } from './commands/keys.ts';
import { registerLogs } from './commands/logs.ts';
import { registerPrices } from './commands/prices.ts';
import { registerProviders } from './commands/providers.ts';
import { registerRun } from './commands/run.ts';
import { registerStart } from './commands/start.ts';
import { registerTop } from './commands/top.ts';
import { registerUi } from './commands/ui.ts';
import { registerUsage } from './commands/usage.ts';

export function buildProgram(): Command {
  const program = new Command('gateway')
    .description('A local LLM gateway: one OpenAI-compatible endpoint for every tool on this machine.')
    .version(packageVersion(), '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    // Team mode for every command: the same state as `gateway start --database ... --redis ...`.
    .option('--database <url>', 'team mode: PostgreSQL URL (or GATEWAY_DATABASE_URL, or "database" in settings.json)')
    .option('--redis <url>', 'team mode: Redis URL (or GATEWAY_REDIS_URL, or "redis" in settings.json)')
    .hook('preAction', () => {
      const o = program.opts<{ database?: string; redis?: string }>();
      if (o.database) process.env.GATEWAY_DATABASE_URL = o.database;
      if (o.redis) process.env.GATEWAY_REDIS_URL = o.redis;
    });
  registerStart(program);
  registerInit(program);
  registerProviders(program);
  registerAliases(program);
  registerKeys(program);
  registerPrices(program);
  registerUsage(program);
  registerLogs(program);
  registerEnv(program);
  registerTop(program);
  registerRun(program);
  registerUi(program);
  registerCassettes(program);
  for (const c of program.commands) {
    c.exitOverride();
    for (const sub of c.commands) sub.exitOverride();
  }
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = exitCodeFor(err);
  }
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // Help and version are not failures; everything else commander reports is a usage mistake.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') return 0;
    return 2;
  }
  if (err instanceof CliError) {
    process.stderr.write(`gateway: ${err.message}\n`);
    return err.exitCode;
  }
  if (err instanceof StorageError || err instanceof KeychainUnavailableError || err instanceof TeamConfigError) {
    process.stderr.write(`gateway: ${err.message}\n`);
    return 1;
  }
  process.stderr.write(`gateway: ${(err as Error)?.message ?? String(err)}\n`);
  return 1;
}
