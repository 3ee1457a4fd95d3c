/** What every command needs: the data home, the state on it (SQLite, or a team's PostgreSQL + Redis), and output helpers. */
import { dataPaths, ensureDataHome, resolveDataHome } from '../core/home.ts';
import { loadSettings } from '../core/settings.ts';
import type { GatewayState } from '../core/state/gateway-state.ts';
import { openGatewayState } from '../core/state/open-state.ts';
import { storageErrorFor } from '../core/storage/db.ts';

export function dataHome(): string {
  return resolveDataHome();
}

/**
 * Opens the state the server on this home uses: team mode when `--database`/`--redis` were given
 * (they set GATEWAY_DATABASE_URL / GATEWAY_REDIS_URL for the command), or the environment or
 * settings.json name them; else the home's SQLite file.
 */
export async function openCliState(home: string): Promise<GatewayState> {
  ensureDataHome(home);
  const file = dataPaths(home).settings;
  const settings = loadSettings(file);
  const { state } = await openGatewayState({ home, team: { database: settings.database, redis: settings.redis } });
  return state;
}

/** Opens the state, runs `fn`, and closes it even when `fn` throws. A SQLite failure names the file. */
export async function withStore<T>(fn: (store: GatewayState, home: string) => T | Promise<T>): Promise<T> {
  const home = dataHome();
  const store = await openCliState(home).catch((err: unknown) => {
    throw storageErrorFor(err, dataPaths(home).db);
  });
  try {
    return await fn(store, home);
  } catch (err) {
    throw storageErrorFor(err, dataPaths(home).db);
  } finally {
    await store.close();
  }
}

export const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
export const note = (line = ''): void => {
  process.stderr.write(`${line}\n`);
};
export const printJson = (value: unknown): void => out(JSON.stringify(value, null, 2));

/** A fixed-width table for humans; `--json` is the form for machines. */
export function table(headers: string[], rows: Array<Array<string | number | null | undefined>>): void {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  out(line(headers));
  for (const r of cells) out(line(r));
}

export function parseList(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  return v.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

export function parsePositiveNumber(v: string, what: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${what} must be a positive number, got "${v}"`);
  return n;
}
