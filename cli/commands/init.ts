/**
 * `gateway init`: a developer's existing setup in one step. The provider keys already in the environment
 * (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ...) move into the OS keychain and those providers
 * are added; with `--key-env` (no keychain) the providers reference the variables instead. The first
 * `gateway start` on a terminal offers the same.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { DEFAULT_BASE_URLS, PRESETS } from '../../core/providers/presets.ts';
import { KNOWN_KEY_VARS, type KnownKeyVar } from '../../core/providers/known-env.ts';
import { probeKeychain } from '../../core/secrets/keychain.ts';
import { readServerState } from '../../core/server-state.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';
import { holdsGatewayKey } from '../../core/upstream/provider-keys.ts';
import { CliError, usageError } from '../cli-error.ts';
import { note, printJson, withStore } from '../context.ts';
import { storeSecret } from './providers.ts';

interface Candidate {
  known: KnownKeyVar;
  variable: string;
  baseUrl: string;
  /** Why it is not added, or null. */
  skip: string | null;
}

/** A base URL from the environment, unless it points at a gateway (after `eval "$(gateway env)"`). */
function usableBaseUrl(value: string | undefined, home: string): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const running = readServerState(home);
  if (running && new URL(running.url).host === url.host) return null;
  return value.replace(/\/+$/, '');
}

async function findCandidates(store: GatewayState, home: string, env: NodeJS.ProcessEnv): Promise<Candidate[]> {
  const providers = await store.providers.list();
  const out: Candidate[] = [];
  for (const known of KNOWN_KEY_VARS) {
    const variable = known.vars.find((v) => (env[v] ?? '').trim() !== '');
    if (!variable) continue;
    const fromEnv = known.baseUrlVar ? usableBaseUrl(env[known.baseUrlVar], home) : null;
    const baseUrl = fromEnv ?? (known.preset ? PRESETS[known.preset].baseUrl : (DEFAULT_BASE_URLS[known.type] ?? ''));
    let skip: string | null = null;
    const reader = providers.find((p) => p.keySource === 'env' && p.keyEnv === variable);
    if (holdsGatewayKey(env[variable])) skip = 'it holds a gateway key (sk-gw-...), not a provider key';
    else if ((await store.providers.get(known.name))) skip = `a provider named "${known.name}" exists already`;
    else if (reader) skip = `provider "${reader.name}" already reads it`;
    out.push({ known, variable, baseUrl, skip });
  }
  return out;
}

function describePlan(candidates: Candidate[], mode: 'keychain' | 'env'): void {
  note('Provider keys found in the environment:');
  const width = Math.max(...candidates.map((c) => c.variable.length));
  for (const c of candidates) {
    const what = c.skip
      ? `skipped: ${c.skip}`
      : `provider "${c.known.name}" (${c.known.preset ?? c.known.type}, ${c.baseUrl}), key ${mode === 'keychain' ? 'copied to the OS keychain' : `read from $${c.variable}`}`;
    note(`  ${c.variable.padEnd(width)}  ${what}`);
  }
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(question)).trim().toLowerCase();
    return answer === '' || answer === 'y' || answer === 'yes';
  } finally {
    rl.close();
  }
}

const noKeychain = (reason: string): CliError =>
  new CliError(
    `No usable OS keychain: ${reason}.\nRun \`gateway init --key-env\` instead: the providers then read their variables when the gateway sends a request, so start the gateway from a shell that has them.`,
  );

async function addAll(store: GatewayState, home: string, chosen: Candidate[], mode: 'keychain' | 'env', env: NodeJS.ProcessEnv): Promise<string[]> {
  const added: string[] = [];
  for (const c of chosen) {
    const { known } = c;
    if (mode === 'keychain') await storeSecret(home, known.name, (env[c.variable] ?? '').trim());
    const options = known.preset ? { ...PRESETS[known.preset].options } : {};
    (await store.providers.add({
      name: known.name,
      type: known.type,
      preset: known.preset,
      baseUrl: c.baseUrl,
      models: null,
      priority: 100,
      keyEnv: mode === 'env' ? c.variable : null,
      keySource: mode,
      options,
    }));
    added.push(known.name);
  }
  return added;
}

interface InitOptions {
  yes?: boolean;
  keyEnv?: boolean;
  json?: boolean;
}

async function runInit(opts: InitOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let mode: 'keychain' | 'env' = opts.keyEnv ? 'env' : 'keychain';
  await withStore(async (store, home) => {
    const candidates = await findCandidates(store, home, env);
    const chosen = candidates.filter((c) => c.skip === null);
    // Asked before the plan is shown: a plan that says "copied to the OS keychain" must be one that can happen.
    const keychain = mode === 'keychain' ? await probeKeychain(home) : null;
    if (keychain?.ok === false && chosen.length > 0) {
      // `--yes` does what it was told or nothing; on a terminal the user is offered the variables instead.
      if (opts.yes || !process.stdin.isTTY) throw noKeychain(keychain.reason);
      note(`No usable OS keychain: ${keychain.reason}. The providers can read their variables instead (as \`gateway init --key-env\` does).`);
      mode = 'env';
    }
    if (candidates.length === 0) {
      note(`No provider keys in the environment (looked for ${KNOWN_KEY_VARS.flatMap((k) => k.vars).join(', ')}).`);
      note(`Add a provider by hand: \`gateway providers add NAME --type openai ${keychain?.ok === false ? '--key-env OPENAI_API_KEY' : '--key-stdin'}\`.`);
    } else describePlan(candidates, mode);
    if (chosen.length === 0) {
      if (opts.json) printJson({ added: [], skipped: candidates.map((c) => ({ variable: c.variable, reason: c.skip })) });
      return;
    }
    if (!opts.yes) {
      if (!process.stdin.isTTY) throw usageError('not on a terminal, so not asking: run `gateway init --yes` to do the above.');
      const where = mode === 'keychain' ? 'into the OS keychain ' : '';
      if (!(await confirm(`Move ${chosen.length === 1 ? 'this key' : `these ${chosen.length} keys`} ${where}and add ${chosen.length === 1 ? 'the provider' : 'the providers'}? [Y/n] `))) {
        note('Nothing changed.');
        return;
      }
    }
    const added = await addAll(store, home, chosen, mode, env);
    note(`Added ${added.map((n) => `"${n}"`).join(', ')}. Their model lists are fetched when the gateway starts (or by \`gateway providers refresh\`).`);
    if (mode === 'keychain') note('The keys are in the OS keychain now: you may remove them from your shell profile and .env files.');
    note('Check them with `gateway providers test`.');
    if (opts.json) printJson({ added, skipped: candidates.filter((c) => c.skip).map((c) => ({ variable: c.variable, reason: c.skip })) });
  });
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description('move provider keys from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ...) into the OS keychain and add those providers')
    .option('-y, --yes', 'do it without asking')
    .option('--key-env', 'reference the variables instead of copying the keys (when there is no keychain)')
    .option('--json', 'print what was added as JSON')
    .action((opts: InitOptions) => runInit(opts));
}

/**
 * The first `gateway start` on a terminal, with no provider yet and keys in the environment, offers
 * `init` once (a marker file in the data home remembers the question was asked).
 */
export async function offerInitOnFirstRun(home: string): Promise<void> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return;
  const marker = path.join(home, 'init-offered');
  if (existsSync(marker)) return;
  const wanted = await withStore(async (store) => (await store.providers.list()).length === 0 && (await findCandidates(store, home, process.env)).some((c) => c.skip === null));
  if (!wanted) return;
  writeFileSync(marker, `${new Date().toISOString()}\n`, { mode: 0o600 });
  note('First run: no provider yet, but your environment has provider keys (`gateway init` does this any time).');
  try {
    await runInit({});
  } catch (err) {
    note(`gateway init: ${(err as Error).message}`);
  }
}
