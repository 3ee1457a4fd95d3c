/**
 * How a gateway uses cassettes: `record` (forward every call and write it down), `replay` (answer only
 * from the cassette, never contact a provider) or `replay-or-record` (replay hits, forward and record
 * misses), and the directory the cassette lives in. The same choice arrives from a run's flags, the
 * environment a gateway is started with, `settings.json`, or a key's own attribute (`MODE:DIR`).
 */
import path from 'node:path';
import { z } from 'zod';

export const CASSETTE_MODES = ['record', 'replay', 'replay-or-record'] as const;
export type CassetteMode = (typeof CASSETTE_MODES)[number];

export const cassetteConfigSchema = z
  .object({
    mode: z.enum(CASSETTE_MODES),
    /** The cassette directory (absolute; in settings.json a relative one is taken from the data home). */
    dir: z.string().min(1),
  })
  .strict();

export type CassetteConfig = z.infer<typeof cassetteConfigSchema>;

const CASSETTE_MODE_ENV = 'GATEWAY_CASSETTE_MODE';
const CASSETTE_DIR_ENV = 'GATEWAY_CASSETTE_DIR';

class CassetteConfigError extends Error {
  override name = 'CassetteConfigError';
}

function isMode(s: string): s is CassetteMode {
  return (CASSETTE_MODES as readonly string[]).includes(s);
}

/** `replay:DIR`, `record:DIR` or `replay-or-record:DIR` (a key's attribute) into a config. */
export function parseCassetteSpec(spec: string, cwd: string = process.cwd()): CassetteConfig {
  const colon = spec.indexOf(':');
  const mode = colon === -1 ? '' : spec.slice(0, colon);
  const dir = colon === -1 ? '' : spec.slice(colon + 1);
  if (!isMode(mode) || dir.trim() === '') {
    throw new CassetteConfigError(`"${spec}" is not a cassette: write MODE:DIR with MODE one of ${CASSETTE_MODES.join(', ')} (e.g. replay:./cassettes).`);
  }
  return { mode, dir: path.resolve(cwd, dir) };
}

export function formatCassetteSpec(c: CassetteConfig): string {
  return `${c.mode}:${c.dir}`;
}

export interface CassetteFlags {
  record?: string;
  replay?: string;
  replayOrRecord?: string;
}

/**
 * The cassette a command's `--record DIR`, `--replay DIR` or `--replay-or-record DIR` asks for (at most
 * one), with DIR made absolute so a gateway started elsewhere finds it; null when none is given.
 */
export function cassetteModeFromFlags(flags: CassetteFlags, cwd: string = process.cwd()): CassetteConfig | null {
  const given: CassetteConfig[] = [];
  if (flags.record !== undefined) given.push({ mode: 'record', dir: flags.record });
  if (flags.replay !== undefined) given.push({ mode: 'replay', dir: flags.replay });
  if (flags.replayOrRecord !== undefined) given.push({ mode: 'replay-or-record', dir: flags.replayOrRecord });
  if (given.length > 1) throw new CassetteConfigError('Choose one of --record, --replay and --replay-or-record.');
  const c = given[0];
  if (!c) return null;
  if (c.dir.trim() === '') throw new CassetteConfigError(`--${c.mode} needs a directory.`);
  return { mode: c.mode, dir: path.resolve(cwd, c.dir) };
}

/** The cassette named by `GATEWAY_CASSETTE_MODE` and `GATEWAY_CASSETTE_DIR`, or null when unset. */
export function cassetteFromEnv(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): CassetteConfig | null {
  const mode = env[CASSETTE_MODE_ENV]?.trim();
  const dir = env[CASSETTE_DIR_ENV]?.trim();
  if (!mode && !dir) return null;
  if (!mode || !isMode(mode)) throw new CassetteConfigError(`${CASSETTE_MODE_ENV} must be one of ${CASSETTE_MODES.join(', ')} (got "${mode ?? ''}").`);
  if (!dir) throw new CassetteConfigError(`${CASSETTE_MODE_ENV}=${mode} needs ${CASSETTE_DIR_ENV} (the cassette directory).`);
  return { mode, dir: path.resolve(cwd, dir) };
}
