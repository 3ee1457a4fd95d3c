/** The `gateway` command. Exit codes: 0 success, 1 failure, 2 bad usage. */
import { Command, CommanderError } from 'commander';
import { StorageError } from '../core/storage/db.ts';
import { KeychainUnavailableError } from '../core/secrets/secret-store.ts';
import { TeamConfigError } from '../core/state/team-urls.ts';
import { CliError } from './cli-error.ts';
import { packageVersion } from './package-info.ts';

type Register = (program: Command) => void;

/**
 * Every command, in the order `--help` lists them, loaded on demand: a `gateway start` loads the server and
 * what it prints, not the other twelve commands' modules (and `keys list` does not load the server's).
 */
const COMMANDS: Array<[name: string, load: () => Promise<Register>]> = [
  ['start', async () => (await import('./commands/start.ts')).registerStart],
  ['init', async () => (await import('./commands/init.ts')).registerInit],
  ['providers', async () => (await import('./commands/providers.ts')).registerProviders],
  ['aliases', async () => (await import('./commands/aliases.ts')).registerAliases],
  ['keys', async () => (await import('./commands/keys.ts')).registerKeys],
  ['prices', async () => (await import('./commands/prices.ts')).registerPrices],
  ['usage', async () => (await import('./commands/usage.ts')).registerUsage],
  ['logs', async () => (await import('./commands/logs.ts')).registerLogs],
  ['env', async () => (await import('./commands/env.ts')).registerEnv],
  ['top', async () => (await import('./commands/top.ts')).registerTop],
  ['run', async () => (await import('./commands/run.ts')).registerRun],
  ['ui', async () => (await import('./commands/ui.ts')).registerUi],
  ['cassettes', async () => (await import('./commands/cassettes.ts')).registerCassettes],
  ['admin-tokens', async () => (await import('./commands/admin-tokens.ts')).registerAdminTokens],
];

/**
 * The program with every command, or only `argv`'s command when it names one: the rest cannot run, and help,
 * version and unknown-command suggestions (which need them all) come with an option or an unknown name.
 */
export async function buildProgram(argv: string[] = []): Promise<Command> {
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
  const named = COMMANDS.find(([name]) => name === argv[2]);
  const wanted = named ? [named] : COMMANDS;
  for (const register of await Promise.all(wanted.map(([, load]) => load()))) register(program);
  for (const c of program.commands) {
    c.exitOverride();
    for (const sub of c.commands) sub.exitOverride();
  }
  return program;
}

/** Commands that keep running (a server, a wrapped agent): a closed stdout must not end them as if done. */
const LONG_RUNNING = new Set(['start', 'run', 'top']);

export async function main(argv: string[]): Promise<void> {
  // `gateway logs | head`: the reader has what it wanted; end quietly, as a shell tool does, not with a stack trace.
  if (!LONG_RUNNING.has(argv[2] ?? '')) {
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
  }
  const program = await buildProgram(argv);
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
  if (err instanceof TeamConfigError) {
    // A team URL that is missing its pair or is not postgres:// / redis:// is a usage mistake, whichever way it came.
    process.stderr.write(`gateway: ${err.message}\n`);
    return 2;
  }
  if (err instanceof StorageError || err instanceof KeychainUnavailableError) {
    process.stderr.write(`gateway: ${err.message}\n`);
    return 1;
  }
  process.stderr.write(`gateway: ${(err as Error)?.message ?? String(err)}\n`);
  return 1;
}
