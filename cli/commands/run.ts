/**
 * `gateway run [--key NAME | --budget USD] -- CMD ARGS...`: runs a command whose OpenAI and Anthropic SDKs
 * (and agents built on them) talk to the gateway with a key made for this run. Uses the running gateway,
 * or starts one on a free port for the run. stdin/stdout/stderr are the command's own, signals are passed
 * on, and the command's exit code is gateway's. At exit the run's key is deleted (its calls stay in the
 * audit log) and the run's calls, tokens and cost are printed to stderr.
 *
 * `--key NAME`: keys are stored hashed, so an existing key's secret cannot be handed to the command.
 * The run gets a key of its own with NAME's limits instead: its model allow-list, rpm and tpm, and as budget
 * what NAME has left in its current period. The spend is recorded under the run's key
 * (`NAME-run-<cmd>-<time>`), not debited from NAME.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Command } from 'commander';
import type { RunningGateway } from '../../core/gateway/app.ts';
import { periodStart } from '../../core/gateway/budget.ts';
import { cassetteModeFromFlags, formatCassetteSpec } from '../../core/cassettes/mode.ts';
import type { CassetteConfig, CassetteFlags } from '../../core/cassettes/mode.ts';
import { readServerState } from '../../core/server-state.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';
import type { NewKey } from '../../core/storage/index.ts';
import { CliError, usageError } from '../cli-error.ts';
import { dataHome, note, openCliState, parsePositiveNumber } from '../context.ts';

export interface RunEnv {
  OPENAI_BASE_URL: string;
  OPENAI_API_KEY: string;
  ANTHROPIC_BASE_URL: string;
  ANTHROPIC_AUTH_TOKEN: string;
}

/** The variables a run's command gets; the Anthropic base URL is the root (its SDK adds `/v1`). */
export function runEnv(baseUrl: string, secret: string): RunEnv {
  return {
    OPENAI_BASE_URL: baseUrl,
    OPENAI_API_KEY: secret,
    ANTHROPIC_BASE_URL: baseUrl.replace(/\/v1\/?$/, ''),
    ANTHROPIC_AUTH_TOKEN: secret,
  };
}

function stamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** The run key's name and limits. */
export async function runKeySpec(store: GatewayState, cmd: string, opts: { key?: string; budget?: number }, now = new Date()): Promise<NewKey> {
  const base = path.basename(cmd).replace(/[^A-Za-z0-9._-]/g, '') || 'cmd';
  if (opts.key === undefined) {
    return { name: `run-${base}-${stamp(now)}`, ...(opts.budget !== undefined ? { budgetUsd: opts.budget, budgetPeriod: 'total' as const } : {}) };
  }
  const parent = await store.keys.findByName(opts.key);
  if (!parent || parent.state === 'deleted') throw new CliError(`No key named "${opts.key}": see \`gateway keys list\`.`);
  if (parent.state !== 'active') throw new CliError(`Key "${opts.key}" is disabled: \`gateway keys enable ${opts.key}\` first.`);
  let budgetUsd: number | null = null;
  if (parent.budgetUsd !== null) {
    const left = parent.budgetUsd - (await store.calls.spendForKey(parent.id, periodStart(parent.budgetPeriod ?? 'total', now)));
    if (left <= 0) throw new CliError(`Key "${opts.key}" has spent its budget of $${parent.budgetUsd}.`);
    budgetUsd = left;
  }
  return {
    name: `${opts.key}-run-${base}-${stamp(now)}`,
    budgetUsd,
    budgetPeriod: budgetUsd !== null ? 'total' : null,
    rpm: parent.rpm,
    tpm: parent.tpm,
    models: parent.models,
  };
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

function runChild(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env });
    // The terminal sends Ctrl-C to the whole process group; other senders only reach us, so pass it on.
    const forward = (sig: NodeJS.Signals) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    };
    for (const s of SIGNALS) process.on(s, forward);
    const cleanup = () => {
      for (const s of SIGNALS) process.off(s, forward);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      cleanup();
      reject(err.code === 'ENOENT' ? new CliError(`Command not found: ${cmd}`) : err);
    });
    child.on('close', (code, signal) => {
      cleanup();
      resolve(code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 1) : 1));
    });
  });
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run a command with OPENAI_*/ANTHROPIC_* pointing at the gateway and a key of its own; prints its spend at exit')
    .usage('[--key NAME | --budget USD] [--record DIR | --replay DIR | --replay-or-record DIR] -- CMD [ARGS...]')
    .option('--key <name>', "give the run a key with this key's limits (allow-list, rpm, tpm, remaining budget)")
    .option('--budget <usd>', 'a budget in USD for the run')
    .option('--record <dir>', "record the run's model calls to the cassette in DIR")
    .option('--replay <dir>', 'answer the run only from the cassette in DIR (offline: no provider is contacted)')
    .option('--replay-or-record <dir>', 'replay from DIR, forward and record what it lacks')
    .argument('<cmd>', 'the command to run')
    .argument('[args...]', 'its arguments')
    .action(async (cmd: string, args: string[], raw: { key?: string; budget?: string } & CassetteFlags) => {
      if (raw.key !== undefined && raw.budget !== undefined) throw usageError('--key and --budget cannot be used together: the run takes the named key\'s budget.');
      let cassette: CassetteConfig | null;
      try {
        cassette = cassetteModeFromFlags(raw);
      } catch (err) {
        throw usageError((err as Error).message);
      }
      let budget: number | undefined;
      try {
        budget = raw.budget !== undefined ? parsePositiveNumber(raw.budget, '--budget') : undefined;
      } catch (err) {
        throw usageError((err as Error).message);
      }
      const home = dataHome();
      const started = Date.now();
      let own: RunningGateway | null = null;
      let baseUrl: string;
      const running = readServerState(home);
      if (running) {
        baseUrl = running.baseUrl;
      } else {
        const { startGateway } = await import('../../core/gateway/app.ts');
        own = await startGateway({ home, port: 0, host: '127.0.0.1', settings: cassette ? { cassettes: cassette } : undefined });
        baseUrl = own.baseUrl;
        note(`gateway run: started a gateway for this run on ${baseUrl}`);
      }
      const store = await openCliState(home);
      let keyName: string | null = null;
      try {
        // The cassette rides on the run's key, so a gateway already running records or replays this run only.
        const spec = { ...(await runKeySpec(store, cmd, { key: raw.key, budget })), cassette: cassette ? formatCassetteSpec(cassette) : null };
        const issued = await store.keys.create(spec);
        keyName = spec.name;
        // A running gateway picks the new key up when it next polls the config version (within a second).
        if (!own) await waitForKey(baseUrl, issued.secret);
        const env: NodeJS.ProcessEnv = { ...process.env, ...runEnv(baseUrl, issued.secret) };
        // A real Anthropic key beside the run's token would make the SDKs send both.
        delete env.ANTHROPIC_API_KEY;
        const code = await runChild(cmd, args, env);
        process.exitCode = code;
      } finally {
        try {
          if (own) await own.deps.store.drainAudit();
          else await new Promise((r) => setTimeout(r, 400)); // the running gateway flushes its audit rows every 200 ms
          if (keyName !== null) {
            const row = (await store.calls.usageSummary({ by: 'key', since: started })).find((r) => r.group === keyName);
            await store.keys.delete(keyName);
            const cost = row ? `$${row.cost_usd.toFixed(6)}` : '$0';
            note(
              `gateway run: ${row?.requests ?? 0} call${row?.requests === 1 ? '' : 's'}, ${row?.input_tokens ?? 0} input + ${row?.output_tokens ?? 0} output tokens, ${cost}` +
                `${row?.unpriced ? ` (${row.unpriced} unpriced)` : ''}; key "${keyName}" deleted.`,
            );
          }
        } finally {
          await store.close();
          if (own) await own.close();
        }
      }
    });
}

/** Waits until the running gateway accepts the new key (it reloads keys within a second). */
async function waitForKey(baseUrl: string, secret: string): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/models`, { headers: { authorization: `Bearer ${secret}` } });
      await res.body?.cancel();
      if (res.status !== 401) return;
    } catch {
      return; // unreachable gateway: the command will say so itself
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
