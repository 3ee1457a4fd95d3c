/**
 * The data home: the one per-user folder holding the SQLite file, the admin token and settings.
 * `GATEWAY_HOME` overrides it so tests, demos and several installs never share state.
 */
import { mkdirSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

export const APP_FOLDER_NAME = 'gateway';

export interface DataPaths {
  home: string;
  db: string;
  adminToken: string;
  settings: string;
}

/**
 * Where the gateway keeps its data. `platform` and the home directory fallback are parameters only so
 * every OS branch can be tested on any machine.
 */
export function resolveDataHome(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const override = env.GATEWAY_HOME;
  if (override !== undefined && override !== '') return path.resolve(override);

  if (platform === 'win32') {
    const appData = nonEmpty(env.APPDATA) ?? path.win32.join(nonEmpty(env.USERPROFILE) ?? homedir(), 'AppData', 'Roaming');
    return path.win32.join(appData, APP_FOLDER_NAME);
  }
  const home = nonEmpty(env.HOME) ?? homedir();
  if (platform === 'darwin') return path.posix.join(home, 'Library', 'Application Support', APP_FOLDER_NAME);
  // XDG says a relative XDG_DATA_HOME is invalid and must be ignored.
  const xdg = nonEmpty(env.XDG_DATA_HOME);
  const dataRoot = xdg !== undefined && path.posix.isAbsolute(xdg) ? xdg : path.posix.join(home, '.local', 'share');
  return path.posix.join(dataRoot, APP_FOLDER_NAME);
}

/**
 * Creates the data home readable only by the user (it holds request bodies and the admin token).
 * An existing folder keeps its mode: `GATEWAY_HOME` may point somewhere the user chose deliberately.
 */
export function ensureDataHome(dir: string): string {
  const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask; make the folder we created exactly 0700.
  if (created !== undefined && process.platform !== 'win32') chmodSync(dir, 0o700);
  return dir;
}

export function dataPaths(home: string): DataPaths {
  return {
    home,
    db: path.join(home, 'gateway.db'),
    adminToken: path.join(home, 'admin-token'),
    settings: path.join(home, 'settings.json'),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
