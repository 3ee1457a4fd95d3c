/**
 * Starts the terminal dashboard. The Ink module (and so React) is imported only here, when called:
 * commands that print data (`usage --json`, `keys list --json`, ...) never load React.
 *
 * Without a TTY, or when the dashboard cannot start or fails later, it falls back to plain log lines
 * from the admin event stream: the gateway behind it must never go down because of its UI.
 */
import { note } from '../context.ts';
import type { DashboardOptions } from './dashboard-options.ts';
import { honourNoColor } from './no-color.ts';

export type { DashboardOptions } from './dashboard-options.ts';

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/** Returns the function that closes the dashboard (or the plain-line fallback). */
export async function runDashboard(opts: DashboardOptions): Promise<() => void> {
  let stopFallback: (() => void) | null = null;
  let stopped = false;
  const fallback = async (why: string | null): Promise<void> => {
    if (why) note(`The dashboard stopped (${why}); printing plain log lines instead.`);
    note(`Live calls (base URL ${opts.baseUrl}):`);
    try {
      const { followCalls } = await import('./follow-calls.ts');
      const stop = await followCalls(opts, undefined, (err) => note(`Live calls ended${err ? ` (${err.message})` : ''}.`));
      if (stopped) stop();
      else stopFallback = stop;
    } catch (err) {
      note(`Cannot follow calls: ${reason(err)}.`);
    }
  };

  if (process.stdout.isTTY !== true) {
    await fallback(null);
    return () => {
      stopped = true;
      stopFallback?.();
    };
  }

  let stopDashboard: (() => void) | null = null;
  honourNoColor();
  try {
    const { mountDashboard } = await import('./dashboard.ts');
    stopDashboard = mountDashboard({ ...opts, onCrash: (err) => void fallback(reason(err)) }).stop;
  } catch (err) {
    await fallback(reason(err));
  }
  return () => {
    stopped = true;
    stopDashboard?.();
    stopFallback?.();
  };
}
