/**
 * `gateway providers add | list | remove`: a fixed model list with a key read from an env var, a
 * provider whose models are discovered from a running (fake) upstream, and removal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { runCli, tempHome, CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';

interface ProviderJson {
  name: string;
  type: string;
  preset: string | null;
  base_url: string;
  priority: number;
  key: string;
  models: string[];
  models_fixed: boolean;
}

let home: string;
let cleanup: () => void;
let up: FakeUpstream;
beforeAll(async () => {
  ({ home, cleanup } = tempHome());
  up = await startOpenAIUpstream({ models: ['listed-a', 'listed-b', 'listed-c'] });
});
afterAll(async () => {
  await up?.close();
  cleanup?.();
});

const cli = (...args: string[]) => runCli(args, { home });

describe('gateway providers', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('add with --models and --key-env, then list --json', async () => {
    const add = await cli('providers', 'add', 'fixed', '--type', 'openai-compatible', '--base-url', 'http://127.0.0.1:9/v1', '--models', 'a,b', '--key-env', 'FIXED_API_KEY', '--priority', '5');
    expect(add.code).toBe(0);
    expect(add.stdout).toBe('');
    expect(add.stderr).toContain('fixed');
    // With a fixed list nothing is asked of the (unreachable) provider.
    const list = await cli('providers', 'list', '--json');
    expect(list.code).toBe(0);
    const providers = JSON.parse(list.stdout) as ProviderJson[];
    expect(providers).toEqual([
      { name: 'fixed', type: 'openai-compatible', preset: null, base_url: 'http://127.0.0.1:9/v1', priority: 5, key: 'env:FIXED_API_KEY', models: ['a', 'b'], models_fixed: true },
    ]);
  });

  it('add without --models discovers the list from the running provider', async () => {
    const before = up.requests.length;
    const add = await cli('providers', 'add', 'found', '--type', 'openai-compatible', '--base-url', up.url);
    expect(add.code).toBe(0);
    expect(add.stderr).toContain('3 models');
    const asked = up.requests.slice(before);
    expect(asked.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models']);

    const list = await cli('providers', 'list', '--json');
    const found = (JSON.parse(list.stdout) as ProviderJson[]).find((p) => p.name === 'found');
    expect(found).toMatchObject({ type: 'openai-compatible', base_url: up.url, key: 'none', models_fixed: false, priority: 100 });
    expect(found!.models.sort()).toEqual(['listed-a', 'listed-b', 'listed-c']);
  });

  it('remove (warning about aliases left without it), and removing an unknown provider fails with exit 1', async () => {
    expect((await cli('aliases', 'set', 'only-fixed', 'fixed/a')).code).toBe(0);
    expect((await cli('aliases', 'set', 'spread', 'fixed/a,found/listed-a')).code).toBe(0);
    const rm = await cli('providers', 'remove', 'fixed');
    expect(rm.code).toBe(0);
    expect(rm.stderr).toMatch(/alias "only-fixed" still names fixed\/a; it now serves nothing/);
    expect(rm.stderr).toMatch(/alias "spread" still names fixed\/a; it goes on to found\/listed-a/);
    const list = await cli('providers', 'list', '--json');
    expect((JSON.parse(list.stdout) as ProviderJson[]).map((p) => p.name)).toEqual(['found']);

    const again = await cli('providers', 'remove', 'fixed');
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('fixed');
  });
});
