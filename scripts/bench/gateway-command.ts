/**
 * How the benchmark starts the gateway: exactly as the README tells users to, in the checkout, with the data
 * home in GATEWAY_HOME and the port in its settings.json (so no flag is added to the command). This is the one
 * place to change when the README's command changes (it was `npx gateway start` until that left npm exec resident); BENCH_GATEWAY_START overrides
 * it for one run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freshStartBundle } from '../../bin/start-bundle.js';
import { REPO_ROOT } from './common.ts';

export const README_START_COMMAND = './gateway start';

export interface StartCommand {
  /** As printed in the report. */
  text: string;
  command: string;
  args: string[];
}

export function gatewayStartCommand(): StartCommand {
  const text = (process.env.BENCH_GATEWAY_START ?? README_START_COMMAND).trim();
  const [command, ...args] = text.split(/\s+/);
  if (!command) throw new Error('BENCH_GATEWAY_START is empty');
  return { text, command, args };
}

/** A warning when the README no longer shows the command the benchmark runs (the constant above went stale). */
export function readmeMismatch(cmd: StartCommand): string | null {
  let readme: string;
  try {
    readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  } catch {
    return null;
  }
  return readme.includes(cmd.text)
    ? null
    : `the README does not contain \`${cmd.text}\`, the command the benchmark starts the gateway with: update README_START_COMMAND in scripts/bench/gateway-command.ts`;
}

/** The checkout the gateway starts from (BENCH_GATEWAY_ROOT, for A/B runs against another tree). */
export const gatewayRoot = (): string => (process.env.BENCH_GATEWAY_ROOT ? path.resolve(process.env.BENCH_GATEWAY_ROOT) : REPO_ROOT);

/**
 * The README's `npm ci` builds the start bundle (bin/start-bundle.js); a checkout edited since would start
 * from its sources, which is not what a user who followed the README runs. Rebuilt here as `npm ci` would;
 * returns what was done, for the log.
 */
export function prepareStartBundle(root = gatewayRoot()): string {
  if (!existsSync(path.join(root, 'scripts', 'build-start-bundle.ts'))) return 'this checkout has no start bundle: it starts from its sources';
  if (freshStartBundle(root)) return 'start bundle up to date';
  const r = spawnSync(process.execPath, ['scripts/build-start-bundle.ts'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building the start bundle failed: ${r.stderr || r.stdout}`);
  return 'start bundle was stale (sources edited since `npm ci`): rebuilt, as `npm ci` does';
}
