/**
 * OUR gateway under test: a throwaway data home set up through `Store` (the CLI's own path) with
 * `openai-compatible` providers pointing at the fake upstream (fixed model lists, a key read from an
 * env var), one local key and a user price for the model so every call is costed; audit with bodies on
 * (the defaults). The server runs in its own pinned child process (gateway-child.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dataPaths } from '../../core/home.ts';
import { Store } from '../../core/storage/index.ts';
import { BENCH_DIR, MESSAGES_MODEL, MODEL, freePort, rssBytes, sleep } from './common.ts';
import { registerTempDir, removeTempDir, spawnNode, waitForLine, waitHealthy } from './proc.ts';
import type { Child } from './proc.ts';

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
}

export interface AuditSummary {
  rows: number;
  ok: number;
  priced: number;
  withBodies: number;
  costUsd: number;
}

export interface GatewayProcess {
  child: Child;
  url: string;
  key: string;
  home: string;
  /** ms from spawn to the first 2xx from /healthz. */
  startMs: number;
  /** RSS 500 ms after the first healthy answer. */
  idleRss: number | null;
  /** Starts the V8 CPU profiler inside the gateway process. */
  profileStart(): Promise<void>;
  /** Stops it and writes the `.cpuprofile` to `file`. */
  profileStop(file: string): Promise<void>;
  /** Graceful stop (flushes the audit log), then a summary of the audit table; removes the home. */
  stop(): Promise<AuditSummary | null>;
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
  if (opts.settings) writeFileSync(dataPaths(home).settings, JSON.stringify(opts.settings, null, 2));

  const port = await freePort();
  const child = spawnNode({
    name: 'gateway',
    cpu: opts.cpu,
    args: [path.join(BENCH_DIR, 'gateway-child.ts'), '--home', home, '--port', String(port)],
    env: { [UPSTREAM_KEY_ENV]: 'sk-bench-upstream-0123456789abcdef', GATEWAY_HOME: home },
  });
  const url = `http://127.0.0.1:${port}`;
  let startMs: number;
  try {
    startMs = await waitHealthy(child, `${url}/healthz`, 20_000);
    await waitForLine(child, /^READY /, 5_000).catch(() => undefined);
  } catch (err) {
    await child.stop(1_000);
    removeTempDir(home);
    throw err;
  }
  await sleep(500);
  const idleRss = rssBytes(child.pid);

  return {
    child,
    url,
    key,
    home,
    startMs,
    idleRss,
    async profileStart() {
      const ready = waitForLine(child, /^PROFILE-(STARTED|ERROR)/, 10_000);
      child.proc.stdin?.write('profile-start\n');
      const m = await ready;
      if (m[1] !== 'STARTED') throw new Error(`profiler did not start: ${m.input}`);
    },
    async profileStop(file: string) {
      const saved = waitForLine(child, /^PROFILE-(SAVED|ERROR)/, 30_000);
      child.proc.stdin?.write(`profile-stop ${file}\n`);
      const m = await saved;
      if (m[1] !== 'SAVED') throw new Error(`profile not saved: ${m.input}`);
    },
    async stop() {
      await child.stop(8_000);
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
          summary = { rows: r.rows, ok: r.ok ?? 0, priced: r.priced ?? 0, withBodies: r.withBodies ?? 0, costUsd: r.costUsd };
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
