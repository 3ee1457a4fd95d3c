/**
 * Portkey's open-source gateway (`@portkey-ai/gateway`, from scripts/bench/node_modules) as a comparison point.
 * It is called OpenAI-style with `x-portkey-provider: openai` and `x-portkey-custom-host: <upstream>/v1`
 * (its README's way to reach a self-hosted OpenAI-compatible server); 127.0.0.1 is in its default
 * `TRUSTED_CUSTOM_HOSTS`. The run checks that its requests really reached the fake upstream.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { BENCH_DIR, freePort } from './common.ts';
import { spawnNode } from './proc.ts';
import { awaitReady } from './server.ts';
import type { ServerUnderTest } from './server.ts';

export const portkeyVersion = (): string => (createRequire(import.meta.url)('@portkey-ai/gateway/package.json') as { version: string }).version;

export async function startPortkey(upstreamBase: string, cpu: number | null): Promise<ServerUnderTest> {
  const port = await freePort();
  const child = spawnNode({ name: 'portkey', cpu, args: [path.join(BENCH_DIR, 'portkey-child.ts'), '--port', String(port)], env: { NODE_ENV: '' } });
  const url = `http://127.0.0.1:${port}`;
  // Its start-up banner animates for 1 s: idle memory is read after it.
  const ready = await awaitReady(child, port, `${url}/`, { timeoutMs: 30_000, settleMs: 1_500 });
  return {
    url,
    headers: {
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${upstreamBase}/v1`,
      authorization: 'Bearer sk-bench-upstream-0123456789abcdef',
    },
    ...ready,
    stop: () => child.stop(),
  };
}
