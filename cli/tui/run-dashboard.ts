/**
 * The terminal dashboard. Until the Ink UI lands (see README), a TTY gets the same live lines as a
 * pipe, plus a header; the Ink module is loaded lazily so `--json` commands never load React.
 */
import { note } from '../context.ts';

export interface DashboardOptions {
  home: string;
  baseUrl: string;
  adminUrl: string;
  adminToken: string;
}

export async function runDashboard(opts: DashboardOptions): Promise<() => void> {
  const { followCalls } = await import('./follow-calls.ts');
  note(`Live calls (base URL ${opts.baseUrl}):`);
  return followCalls(opts);
}
