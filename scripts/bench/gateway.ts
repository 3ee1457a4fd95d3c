/**
 * OUR gateway under test, started exactly as the README tells users to (gateway-command.ts: today
 * `./gateway start`, in the checkout), on a throwaway data home set up through `Store` (the CLI's own
 * path): `openai-compatible` providers pointing at the fake upstream (fixed model lists, a key read from an
 * env var), one local key and a user price for the model so every call is costed; audit with bodies on (the
 * defaults). The port goes into the home's settings.json, so the command carries no extra flag. Its whole
 * process tree counts: CPU is summed over it and every resident process is reported.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dataPaths } from '../../core/home.ts';
import { Store } from '../../core/storage/index.ts';
import { MESSAGES_MODEL, MODEL, freePort } from './common.ts';
import { gatewayRoot, gatewayStartCommand } from './gateway-command.ts';
import { INSPECTABLE_NODE_OPTIONS, InspectorProfiler } from './inspector-client.ts';
import { signalTree } from './process-tree.ts';
import { registerTempDir, removeTempDir, spawnCommand } from './proc.ts';
import type { Child } from './proc.ts';
import { awaitReady } from './server.ts';
import type { Readiness, ServerUnderTest } from './server.ts';

export interface BenchProvider {
  name: string;
  baseUrl: string;
  priority: number;
  /** Default `openai-compatible` serving the bench model; `anthropic` serves the `/v1/messages` row's model. */
  type?: 'openai-compatible' | 'anthropic';
}

export interface GatewayOptions {
  providers: BenchProvider[];
  /** settings.json of the data home (merged over the defaults by the gateway). */
  settings?: Record<string, unknown>;
  cpu: number | null;
  /** Start it so its CPU profiler can be driven (`profileStart`/`profileStop`); off for measured runs. */
  inspectable?: boolean;
}

export interface AuditSummary {
  /** Rows still in the calls table (retention removes the oldest at the `audit.maxBytes` cap; a round's gateway stays under the default). */
  rows: number;
  /** Calls the writer recorded, from the running totals (`spend_daily`), which retention does not lower. */
  recorded: number;
  ok: number;
  priced: number;
  withBodies: number;
  costUsd: number;
}

export interface GatewayProcess extends ServerUnderTest {
  child: Child;
  key: string;
  home: string;
  /** The command it was started with, as the report prints it. */
  command: string;
  /** Starts the V8 CPU profiler inside the gateway process (needs `inspectable`). */
  profileStart(): Promise<void>;
  /** Stops it and writes the `.cpuprofile` to `file`. */
  profileStop(file: string): Promise<void>;
  /** Graceful stop (SIGTERM to the gateway: it flushes the audit log), then a summary of the audit table; removes the home. */
  stopWithAudit(): Promise<AuditSummary | null>;
}

const UPSTREAM_KEY_ENV = 'BENCH_UPSTREAM_KEY';

export async function startGatewayProcess(opts: GatewayOptions): Promise<GatewayProcess> {
  const home = mkdtempSync(path.join(tmpdir(), 'gw-bench-'));
  registerTempDir(home);
  let key: string;
  const setup = Store.open(home);
  try {
    for (const p of opts.providers) {
      setup.providers.add({
        name: p.name,
        type: p.type ?? 'openai-compatible',
        preset: null,
        baseUrl: p.baseUrl,
        models: [p.type === 'anthropic' ? MESSAGES_MODEL : MODEL],
        priority: p.priority,
        keyEnv: UPSTREAM_KEY_ENV,
        keySource: 'env',
        options: {},
      });
    }
    key = setup.keys.create({ name: 'bench' }).secret;
    setup.prices.set(MODEL, { inputPerMtok: 2.5, outputPerMtok: 10 });
    setup.prices.set(MESSAGES_MODEL, { inputPerMtok: 3, outputPerMtok: 15 });
  } finally {
    setup.close();
  }
  const port = await freePort();
  writeFileSync(dataPaths(home).settings, JSON.stringify({ ...opts.settings, port, host: '127.0.0.1' }, null, 2));

  const cmd = gatewayStartCommand();
  const env: NodeJS.ProcessEnv = { [UPSTREAM_KEY_ENV]: 'sk-bench-upstream-0123456789abcdef', GATEWAY_HOME: home };
  if (opts.inspectable) env.NODE_OPTIONS = [process.env.NODE_OPTIONS, INSPECTABLE_NODE_OPTIONS].filter(Boolean).join(' ');
  const child = spawnCommand(cmd.command, {
    name: 'gateway',
    cpu: opts.cpu,
    args: cmd.args,
    cwd: gatewayRoot(),
    env,
  });
  const url = `http://127.0.0.1:${port}`;
  let ready: Readiness;
  try {
    ready = await awaitReady(child, port, `${url}/healthz`, { timeoutMs: 30_000, settleMs: 1_000 });
  } catch (err) {
    removeTempDir(home);
    throw err;
  }
  const profiler = opts.inspectable ? new InspectorProfiler(child, ready.mainPid) : null;

  /** SIGTERM to the serving process (a graceful stop flushes the audit log); an `npm exec` parent then exits with it. */
  const stop = async (): Promise<void> => {
    profiler?.close();
    try {
      process.kill(ready.mainPid, 'SIGTERM');
    } catch {
      /* already gone */
    }
    const timer = setTimeout(() => signalTree(child.pid, 'SIGKILL'), 10_000);
    await child.exited;
    clearTimeout(timer);
    signalTree(child.pid, 'SIGKILL');
  };

  return {
    child,
    url,
    headers: { authorization: `Bearer ${key}` },
    key,
    home,
    command: cmd.text,
    ...ready,
    async profileStart() {
      if (!profiler) throw new Error('the gateway was not started inspectable');
      await profiler.start();
    },
    async profileStop(file: string) {
      if (!profiler) throw new Error('the gateway was not started inspectable');
      await profiler.stop(file);
    },
    async stop() {
      await stop();
      removeTempDir(home);
    },
    async stopWithAudit() {
      await stop();
      let summary: AuditSummary | null = null;
      try {
        const store = Store.open(home);
        try {
          const r = store.db
            .prepare(
              `SELECT COUNT(*) AS rows, SUM(status = 200) AS ok, SUM(pricing = 'priced') AS priced,
                      SUM(request_body IS NOT NULL AND response_body IS NOT NULL) AS withBodies, COALESCE(SUM(cost_usd), 0) AS costUsd
                 FROM calls`,
            )
            .get() as { rows: number; ok: number | null; priced: number | null; withBodies: number | null; costUsd: number };
          const recorded = (store.db.prepare('SELECT COALESCE(SUM(requests), 0) AS n FROM spend_daily').get() as { n: number }).n;
          summary = { rows: r.rows, recorded, ok: r.ok ?? 0, priced: r.priced ?? 0, withBodies: r.withBodies ?? 0, costUsd: r.costUsd };
        } finally {
          store.close();
        }
      } catch {
        summary = null;
      }
      removeTempDir(home);
      return summary;
    },
  };
}
