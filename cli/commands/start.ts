/** `gateway start`: runs the gateway in the foreground until Ctrl-C (which flushes the audit log). */
import type { Command } from 'commander';
import { z } from 'zod';
import type { RunningGateway } from '../../core/gateway/app.ts';
import { callToJson } from '../../core/call-json.ts';
import { clearServerState, writeServerState } from '../../core/server-state.ts';
import { CliError, usageError } from '../cli-error.ts';
import { dataHome, note, out } from '../context.ts';
import { formatCallLine } from './logs.ts';
import { loginLink } from './ui.ts';

const optsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  demo: z.boolean().optional(),
  tui: z.boolean().optional(),
});

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
    .action(async (raw: Record<string, unknown>) => {
      const parsed = optsSchema.safeParse(raw);
      if (!parsed.success) throw usageError(`--${String(parsed.error.issues[0]?.path[0])}: ${parsed.error.issues[0]?.message}`);
      const o = parsed.data;
      const home = dataHome();
      let gw: RunningGateway;
      try {
        // Loaded here, not at the top: every other command would pay for the whole server's modules.
        const { startGateway } = await import('../../core/gateway/app.ts');
        gw = await startGateway({ home, port: o.port, host: o.host, demo: o.demo });
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { port?: number };
        // The port tried may come from settings.json, not the flag: node's error names the real one.
        const port = e.port ?? o.port ?? 4141;
        if (e.code === 'EADDRINUSE') {
          throw new CliError(`Port ${port} is already in use (another gateway?); start on another port with --port N.`);
        }
        if (e.code === 'EACCES') throw new CliError(`Not allowed to listen on port ${port}; choose another with --port N.`);
        throw err;
      }
      writeServerState(home, { url: gw.url, baseUrl: gw.baseUrl, pid: process.pid, startedAt: new Date().toISOString() });
      // Judged on the address actually bound, so a non-loopback "host" in settings.json warns as well as --host.
      if (!isLoopback(gw.host)) {
        note(
          `Warning: listening on ${gw.host}, not loopback: other machines can reach the gateway. Every call still needs a gateway key, ` +
            'and requests must name this machine by a loopback name or one listed in "allowedHosts" in settings.json.',
        );
      }

      note(`gateway listening on ${gw.baseUrl}`);
      // A one-time sign-in link (valid 15 minutes; `gateway ui` makes a fresh one), not the token's path.
      const dashboardLink = await loginLink(gw.url, gw.adminToken, 900).then((l) => l.url, () => null);
      note(dashboardLink ? `Dashboard (signed in; the link works once, for 15 minutes; later: gateway ui): ${dashboardLink}` : `Dashboard: ${gw.url}/ui (gateway ui opens it signed in)`);
      if (gw.createdKey) {
        note(`Demo key "${gw.createdKey.name}" (shown once):`);
        out(gw.createdKey.secret);
      } else if (!gw.deps.store.keys.list().some((k) => k.state === 'active')) {
        note('No key yet: `gateway keys create --name mytool`, or `eval "$(gateway env --new-key mytool)"`.');
      }
      if (gw.deps.live.providers.length === 0) note('No provider yet: `gateway providers add NAME --type openai --key-env OPENAI_API_KEY`, or restart with --demo.');
      note(`Try: curl ${gw.baseUrl}/models -H "Authorization: Bearer $OPENAI_API_KEY"`);
      note(`Data home: ${home}. Stop with Ctrl-C.`);

      const tui = o.tui !== false && process.stdout.isTTY === true && process.stdin.isTTY === true;
      let stopTui: (() => void) | null = null;
      // Quitting the dashboard (q / Ctrl-C, which raw mode turns into a key, not a SIGINT) stops the gateway like a signal.
      let requestStop: () => void = () => {};
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
        gw.onCall((row) => out(formatCallLine(callToJson(row))));
      }

      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = async () => {
          if (stopping) return;
          stopping = true;
          stopTui?.();
          note('Stopping: flushing the audit log…');
          await gw.close();
          clearServerState(home);
          resolve();
        };
        requestStop = () => void stop();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        process.once('SIGHUP', stop);
      });
    });
}
