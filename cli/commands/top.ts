/** `gateway top`: the live dashboard, attached to a running gateway through its admin API. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { dataPaths } from '../../core/home.ts';
import { readServerState } from '../../core/server-state.ts';
import { CliError } from '../cli-error.ts';
import { dataHome } from '../context.ts';

export function registerTop(program: Command): void {
  program
    .command('top')
    .description('live dashboard of a running gateway')
    .action(async () => {
      const home = dataHome();
      const state = readServerState(home);
      if (!state) throw new CliError('No gateway is running on this data home; start one with `gateway start`.');
      const adminToken = readFileSync(dataPaths(home).adminToken, 'utf8').trim();
      const { runDashboard } = await import('../tui/run-dashboard.ts');
      // q / Ctrl-C in the dashboard (raw mode: Ctrl-C is a key there, not a SIGINT) or a signal detaches.
      let quit: () => void = () => {};
      const stop = await runDashboard({ home, baseUrl: state.baseUrl, adminUrl: state.url, adminToken, onQuit: () => quit() });
      await new Promise<void>((resolve) => {
        quit = resolve;
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      stop();
    });
}
