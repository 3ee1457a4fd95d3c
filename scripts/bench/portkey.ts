/**
 * Portkey's open-source gateway (`@portkey-ai/gateway`, from node_modules) as a comparison point. It is
 * called OpenAI-style with `x-portkey-provider: openai` and `x-portkey-custom-host: <upstream>/v1`
 * (its README's way to reach a self-hosted OpenAI-compatible server); 127.0.0.1 is in its default
 * `TRUSTED_CUSTOM_HOSTS`. The run checks that its requests really reached the fake upstream.
 */
import path from 'node:path';
import { BENCH_DIR, freePort, rssBytes, sleep } from './common.ts';
import { spawnNode, waitHealthy } from './proc.ts';
import type { Child } from './proc.ts';

export interface PortkeyProcess {
  child: Child;
  url: string;
  /** Headers that route a request through Portkey to the fake upstream. */
  headers: Record<string, string>;
  startMs: number;
  idleRss: number | null;
  version: string;
}

export async function startPortkeyProcess(upstreamBase: string, cpu: number | null): Promise<PortkeyProcess> {
  const port = await freePort();
  const child = spawnNode({ name: 'portkey', cpu, args: [path.join(BENCH_DIR, 'portkey-child.ts'), '--port', String(port)], env: { NODE_ENV: '' } });
  const url = `http://127.0.0.1:${port}`;
  let startMs: number;
  try {
    startMs = await waitHealthy(child, `${url}/`, 30_000);
  } catch (err) {
    await child.stop(1_000);
    throw err;
  }
  await sleep(1_500); // its start-up banner animates for 1 s; measure idle memory after it
  const { createRequire } = await import('node:module');
  const version = (createRequire(import.meta.url)('@portkey-ai/gateway/package.json') as { version: string }).version;
  return {
    child,
    url,
    headers: {
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${upstreamBase}/v1`,
      authorization: 'Bearer sk-bench-upstream-0123456789abcdef',
    },
    startMs,
    idleRss: rssBytes(child.pid),
    version,
  };
}
