/**
 * LiteLLM's proxy as the second peer, one worker, when Python 3 is available: installed by
 * install-litellm.sh (pinned, from PyPI) into .bench/litellm-venv, configured with one model on the same fake
 * upstream (`openai/bench-model` at `<upstream>/v1`) and a master key (it refuses to start without one). No
 * database, no callbacks: its plain proxy mode. Any failure to install or start skips the row with a note.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BENCH_DIR, MODEL, OUT_DIR, freePort } from './common.ts';
import { signalTree } from './process-tree.ts';
import { registerTempDir, removeTempDir, spawnCommand } from './proc.ts';
import { awaitReady } from './server.ts';
import type { Readiness, ServerUnderTest } from './server.ts';

const VENV = path.join(OUT_DIR, 'litellm-venv');
const MASTER_KEY = 'sk-benchLiteLLMmasterKey7Qx3ZpN4vR8tW2yK5mJ9';
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/** Installs it when needed; returns its version, or why it cannot run here. */
export function ensureLiteLLM(log: (m: string) => void): { version: string } | { skip: string } {
  const r = spawnSync('bash', [path.join(BENCH_DIR, 'install-litellm.sh')], { stdio: ['ignore', 'inherit', 'pipe'], timeout: INSTALL_TIMEOUT_MS, encoding: 'utf8' });
  if (r.stderr) for (const line of r.stderr.split('\n').filter(Boolean).slice(-5)) log(`litellm install: ${line}`);
  if (r.error || r.status !== 0) {
    const why = r.status === 3 ? 'no python3 on PATH' : `install failed (${r.error?.message ?? `exit ${String(r.status)}`}): ${(r.stderr ?? '').trim().split('\n').pop() ?? ''}`;
    return { skip: `LiteLLM skipped: ${why}` };
  }
  const probe = spawnSync(path.join(VENV, 'bin', 'python'), ['-c', 'import importlib.metadata as m; print(m.version("litellm"))'], { encoding: 'utf8' });
  return probe.status === 0 ? { version: probe.stdout.trim() } : { skip: 'LiteLLM skipped: installed, but its version cannot be read' };
}

export async function startLiteLLM(upstreamBase: string, cpu: number | null): Promise<ServerUnderTest> {
  const bin = path.join(VENV, 'bin', 'litellm');
  if (!existsSync(bin)) throw new Error(`${bin} is missing`);
  const dir = mkdtempSync(path.join(tmpdir(), 'litellm-bench-'));
  registerTempDir(dir);
  const config = path.join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      'model_list:',
      `  - model_name: ${MODEL}`,
      '    litellm_params:',
      `      model: openai/${MODEL}`,
      `      api_base: ${upstreamBase}/v1`,
      '      api_key: sk-bench-upstream-0123456789abcdef',
      'litellm_settings:',
      '  telemetry: false',
      'general_settings:',
      `  master_key: ${MASTER_KEY}`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawnCommand(bin, {
    name: 'litellm',
    cpu,
    args: ['--config', config, '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    // Its model price map from the package, not from the network.
    env: { LITELLM_LOCAL_MODEL_COST_MAP: 'True', PYTHONUNBUFFERED: '1' },
    cwd: dir,
  });
  const url = `http://127.0.0.1:${port}`;
  let ready: Readiness;
  try {
    ready = await awaitReady(child, port, `${url}/health/liveliness`, { timeoutMs: 120_000, settleMs: 1_000 });
  } catch (err) {
    removeTempDir(dir);
    throw err;
  }
  return {
    url,
    headers: { authorization: `Bearer ${MASTER_KEY}` },
    ...ready,
    async stop() {
      await child.stop(5_000);
      signalTree(child.pid, 'SIGKILL');
      removeTempDir(dir);
    },
  };
}
