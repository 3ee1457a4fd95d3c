/**
 * How the benchmark starts the gateway: exactly as the README tells users to, in the checkout, with the data
 * home in GATEWAY_HOME and the port in its settings.json (so no flag is added to the command). This is the one
 * place to change when the README's command changes (e.g. to `./gateway start`); BENCH_GATEWAY_START overrides
 * it for one run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './common.ts';

export const README_START_COMMAND = 'npx gateway start';

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
