/**
 * The data home: the one per-user folder holding the SQLite file, the admin token and settings.
 * `GATEWAY_HOME` overrides it so tests, demos and several installs never share state.
 */
import { mkdirSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

const APP_FOLDER_NAME = 'gateway';

export interface DataPaths {
  home: string;
  db: string;
  adminToken: string;
  settings: string;
  /** Held by the one running gateway of this home: its pid and, once listening, its port and URL. */
  lock: string;
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
  let created: string | undefined;
  try {
    created = mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new DataHomeError(dir, err as NodeJS.ErrnoException);
  }
  // mkdir's mode is filtered by the umask; make the folder we created exactly 0700.
  if (created !== undefined && process.platform !== 'win32') chmodSync(dir, 0o700);
  return dir;
}

/** The data home cannot be created: names the folder and what to do. */
class DataHomeError extends Error {
  readonly code: string | undefined;
  constructor(dir: string, cause: NodeJS.ErrnoException) {
    const why =
      cause.code === 'EEXIST' || cause.code === 'ENOTDIR'
        ? 'a part of that path is a file, not a folder'
        : cause.code === 'EACCES' || cause.code === 'EPERM' || cause.code === 'EROFS'
          ? `this user may not create it (${cause.code})`
          : (cause.message ?? String(cause));
    super(`Cannot use ${dir} as the gateway's data folder: ${why}. Fix that path, or set GATEWAY_HOME to another folder.`);
    this.name = 'DataHomeError';
    this.code = cause.code;
  }
}

export function dataPaths(home: string): DataPaths {
  return {
    home,
    db: path.join(home, 'gateway.db'),
    adminToken: path.join(home, 'admin-token'),
    settings: path.join(home, 'settings.json'),
    lock: path.join(home, 'gateway.lock'),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
