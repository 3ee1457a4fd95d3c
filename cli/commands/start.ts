/** `gateway start`: runs the gateway in the foreground until Ctrl-C (which flushes the audit log). */
import module from 'node:module';
import type { Command } from 'commander';
import { z } from 'zod';
import { cassetteModeFromFlags } from '../../core/cassettes/mode.ts';
import type { CassetteConfig } from '../../core/cassettes/mode.ts';
import type { RunningGateway } from '../../core/gateway/app.ts';
import { adminActionLine } from '../../core/admin/admin-action.ts';
import { dataPaths, ensureDataHome } from '../../core/home.ts';
import { clearServerState, writeServerState } from '../../core/server-state.ts';
import { acquireStartLock } from '../../core/start-lock.ts';
import { storageErrorFor } from '../../core/storage/db.ts';
import { gatewayKeyInVarMessage, holdsGatewayKey } from '../../core/upstream/provider-keys.ts';
import { CliError, usageError } from '../cli-error.ts';
import { bufferedLines } from '../buffered-lines.ts';
import { catchStopSignals, onStopSignal, stopAsIfSignalled, stopRequested } from '../stop-signals.ts';
import { watchLauncher } from '../launcher-watch.ts';
import { dataHome, note, out } from '../context.ts';
import { demoCurl, demoKeyFile, saveDemoKey } from './demo-curl.ts';
import { offerInitOnFirstRun } from './init.ts';
import { rowLinePieces } from './logs.ts';

const optsSchema = z.object({
  port: z.coerce.number({ message: 'must be a port number from 0 to 65535 (0 picks a free one)' }).int('must be a port number from 0 to 65535 (0 picks a free one)').min(0, 'must be a port number from 0 to 65535 (0 picks a free one)').max(65535, 'must be a port number from 0 to 65535 (0 picks a free one)').optional(),
  host: z.string().min(1).optional(),
  demo: z.boolean().optional(),
  tui: z.boolean().optional(),
  record: z.string().optional(),
  replay: z.string().optional(),
  replayOrRecord: z.string().optional(),
});

function cassetteFromStartFlags(o: z.infer<typeof optsSchema>): CassetteConfig | null {
  try {
    return cassetteModeFromFlags(o);
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const isLoopback = (host: string): boolean => LOOPBACK.has(host.toLowerCase()) || /^(::ffff:)?127\.\d+\.\d+\.\d+$/i.test(host);

export function registerStart(program: Command): void {
  program
    .command('start')
    .description('run the gateway (OpenAI-compatible API on http://127.0.0.1:4141/v1)')
    .option('--port <n>', 'port to listen on (default 4141)')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1)')
    .option('--demo', 'add the offline demo provider (and a key if none exists)')
    .option('--no-tui', 'print plain log lines instead of the dashboard')
    .option('--record <dir>', 'forward every model call and record it to the cassette in DIR')
    .option('--replay <dir>', 'answer model calls only from the cassette in DIR (no provider is contacted)')
    .option('--replay-or-record <dir>', 'replay from DIR, forward and record what it lacks')
    // Team mode's flags belong to every command (cli/main.ts), so commander lists them under `gateway --help` only.
    .addHelpText(
      'after',
      '\nTeam mode (PostgreSQL + Redis instead of this machine\'s SQLite):\n  --database <url>  PostgreSQL URL (or GATEWAY_DATABASE_URL)\n  --redis <url>     Redis URL (or GATEWAY_REDIS_URL)\n  e.g. gateway start --database postgres://user:pass@host/db --redis redis://host:6379',
    )
    .action(async (raw: Record<string, unknown>) => {
      const parsed = optsSchema.safeParse(raw);
      if (!parsed.success) throw usageError(`--${String(parsed.error.issues[0]?.path[0])}: ${parsed.error.issues[0]?.message}`);
      const o = parsed.data;
      // A stop signal from here on ends the start cleanly (exit 0), whatever step it arrives in.
      catchStopSignals();
      // So does the end of an `npx gateway start` launcher, which does not pass a SIGTERM on.
      watchLauncher(stopAsIfSignalled);
      const home = ensureDataHome(dataHome());
      // Before anything else: a second start on this home names the first and changes nothing.
      const lock = acquireStartLock(home);
      process.once('exit', () => lock.release());
      if (o.demo !== true && !stopRequested()) await offerInitOnFirstRun(home);
      if (stopRequested()) return void note('Stopped before the gateway started.');
      let gw: RunningGateway;
      try {
        // Loaded here, not at the top: every other command would pay for the whole server's modules.
        const { startGateway } = await import('../../core/gateway/app.ts');
        const cassettes = cassetteFromStartFlags(o);
        gw = await startGateway({ home, port: o.port, host: o.host, demo: o.demo, settings: cassettes ? { cassettes } : undefined });
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { port?: number };
        // The port tried may come from settings.json, not the flag: node's error names the real one.
        const port = e.port ?? o.port ?? 4141;
        if (e.code === 'EADDRINUSE') {
          throw new CliError(`Port ${port} is already in use (another gateway?); start on another port with --port N.`);
        }
        if (e.code === 'EACCES') throw new CliError(`Not allowed to listen on port ${port}; choose another with --port N.`);
        // A failed start may leave a worker thread or the demo upstream behind: it must end, never hang.
        setTimeout(() => process.exit(), 2_000).unref();
        throw storageErrorFor(err, dataPaths(home).db);
      }
      if (stopRequested()) {
        // Signalled while starting: nothing can be in flight yet; close (flushing the store) and exit 0.
        note('Stopping: a stop signal arrived while the gateway was starting.');
        await gw.close();
        return;
      }
      lock.listening(gw.port, gw.url);
      (await import('../../core/gateway/v8-tuning.ts')).tuneV8ForServer();
      writeServerState(home, { url: gw.url, baseUrl: gw.baseUrl, pid: process.pid, startedAt: new Date().toISOString() });
      // Judged on the address actually bound, so a non-loopback "host" in settings.json warns as well as --host.
      if (!isLoopback(gw.host)) {
        note(
          `Warning: listening on ${gw.host}, not loopback: other machines can reach the gateway. Every call still needs a gateway key, ` +
            'and requests must name this machine by a loopback name or one listed in "allowedHosts" in settings.json.',
        );
      }

      note(`gateway listening on ${gw.baseUrl}`);
      if (gw.deps.settings.cassettes) note(`Cassette: ${gw.deps.settings.cassettes.mode} ${gw.deps.settings.cassettes.dir}`);
      // A one-time sign-in link (valid 15 minutes; `gateway ui` makes a fresh one), not the token's path. Not for a
      // team: its log goes to journald or a log shipper, read far more widely than the admin-token file, and the
      // link opened a 12 h session on every instance.
      if (gw.deps.store.kind === 'team') note(`Dashboard: ${gw.url}/ui (sign in with \`gateway ui\` or an admin token)`);
      else note(`Dashboard (signed in; the link works once, for 15 minutes; later: gateway ui): ${gw.loginLink(900_000)}`);
      if (gw.createdKey) {
        note(`Demo key "${gw.createdKey.name}" (shown once; also kept in ${demoKeyFile(home)}):`);
        out(gw.createdKey.secret);
        saveDemoKey(home, gw.createdKey.secret);
      } else if (![...gw.deps.live.keysByHash.values()].some((k) => k.state === 'active')) {
        note('No key yet: `gateway keys create --name mytool`, or `eval "$(gateway env --new-key mytool)"`.');
      }
      for (const p of gw.deps.live.providers) {
        const v = p.settings.keySource === 'env' && p.settings.keyEnv ? p.settings.keyEnv : null;
        if (v && holdsGatewayKey(process.env[v])) note(`Warning: provider "${p.settings.name}": ${gatewayKeyInVarMessage(p.settings.name, v)}`);
      }
      if (gw.deps.live.providers.length === 0) {
        note('No provider yet: `gateway init` moves OPENAI_API_KEY and the like into the keychain (`gateway init --key-env` where there is none), or `gateway providers add NAME --type openai --key-stdin` (`--key-env OPENAI_API_KEY` without a keychain), or restart with --demo.');
      }
      const tryLine = await demoCurl(home, gw.baseUrl, gw.createdKey?.secret ?? null, gw.deps.store);
      note(tryLine ? `Try:\n${tryLine}` : `Try: curl ${gw.baseUrl}/models -H "Authorization: Bearer $OPENAI_API_KEY"   (after \`eval "$(gateway env --new-key mytool)"\`)`);
      note(`Data home: ${home}. Stop with Ctrl-C.`);

      const tui = o.tui !== false && process.stdout.isTTY === true && process.stdin.isTTY === true;
      let stopTui: (() => void) | null = null;
      // Quitting the dashboard (q / Ctrl-C, which raw mode turns into a key, not a SIGINT) stops the gateway like a signal.
      let requestStop: () => void = () => {};
      const callLines = bufferedLines();
      if (tui) {
        const { runDashboard } = await import('../tui/run-dashboard.ts');
        stopTui = await runDashboard({
          home,
          baseUrl: gw.baseUrl,
          adminUrl: gw.url,
          adminToken: gw.adminToken,
          createdKey: gw.createdKey,
          quitStopsGateway: true,
          onQuit: () => requestStop(),
        });
      } else {
        gw.onCall((row) => callLines.line(rowLinePieces(row)));
        gw.onAdminAction((action) => note(adminActionLine(action)));
      }

      // Everything a start loads is loaded: write the compile cache now (Node would only at exit), so the next start
      // uses it even if this one never exits cleanly.
      module.flushCompileCache?.();

      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = async () => {
          if (stopping) return;
          stopping = true;
          stopTui?.();
          note(`Stopping: letting calls in flight finish (up to ${Math.round(gw.deps.settings.shutdownGraceMs / 1000)}s; signal again to stop now)…`);
          await gw.close();
          callLines.flush();
          clearServerState(home);
          resolve();
        };
        // A second signal stops at once: cut what runs (each call still records its row), flush, exit.
        const now = () => {
          if (!stopping) return void stop();
          note('Stopping now: cutting calls in flight and flushing the audit log.');
          void gw.stopNow().finally(() => {
            callLines.flush();
            clearServerState(home);
            process.exit(1);
          });
        };
        requestStop = () => void stop();
        onStopSignal(now);
        // A signal during the notes or the dashboard's start: stop now that stopping is possible.
        if (stopRequested()) void stop();
      });
    });
}
