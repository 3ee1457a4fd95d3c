/**
 * `gateway init`: the provider keys already in the environment become providers in one step. Run as the
 * real command; the keychain mode is covered where a keychain exists (test/integration/keychain-e2e),
 * here `--key-env` (no keychain) and the refusals: no terminal without --yes, a gateway key in a
 * provider variable, a provider that exists already, and a keychain that is not there.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KNOWN_KEY_VARS } from '../../core/providers/known-env.ts';
import { CLI_TEST_TIMEOUT_MS, runCli, tempHome } from '../support/cli.ts';

const homes: Array<() => void> = [];
afterAll(() => {
  for (const c of homes) c();
});
function home(): string {
  const h = tempHome('gw-init-');
  homes.push(h.cleanup);
  return h.home;
}

/** Only the variables a test sets: the machine's own provider keys must not leak in. */
function env(set: Record<string, string>): Record<string, string | undefined> {
  const e: Record<string, string | undefined> = {};
  for (const k of KNOWN_KEY_VARS) for (const v of k.vars) e[v] = undefined;
  e.OPENAI_BASE_URL = undefined;
  e.ANTHROPIC_BASE_URL = undefined;
  return { ...e, ...set };
}

interface ListedProvider {
  name: string;
  type: string;
  preset: string | null;
  base_url: string;
  key: string;
}

describe('gateway init', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('--yes --key-env adds a provider per variable found, skipping a gateway key, and is idempotent', async () => {
    const h = home();
    const e = env({
      OPENAI_API_KEY: 'sk-openai-0123456789',
      GOOGLE_API_KEY: 'AIza-fake-0123456789',
      DEEPSEEK_API_KEY: 'sk-deepseek-0123456789',
      ANTHROPIC_API_KEY: 'sk-gw-abcdefghijklmnopqrstuvwxyz0123456789ABCD',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    const r = await runCli(['init', '--yes', '--key-env', '--json'], { home: h, env: e });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { added: string[]; skipped: Array<{ variable: string; reason: string }> };
    expect(out.added).toEqual(['openai', 'gemini', 'deepseek']);
    expect(out.skipped).toEqual([{ variable: 'ANTHROPIC_API_KEY', reason: 'it holds a gateway key (sk-gw-...), not a provider key' }]);

    const list = JSON.parse((await runCli(['providers', 'list', '--json'], { home: h })).stdout) as ListedProvider[];
    expect(list.map((p) => [p.name, p.type, p.preset, p.key])).toEqual([
      ['openai', 'openai', null, 'env:OPENAI_API_KEY'],
      ['gemini', 'gemini', null, 'env:GOOGLE_API_KEY'],
      ['deepseek', 'openai-compatible', 'deepseek', 'env:DEEPSEEK_API_KEY'],
    ]);
    // OPENAI_BASE_URL, when set, is where the user's OpenAI traffic goes already.
    expect(list[0].base_url).toBe('http://127.0.0.1:9/v1');
    expect(list[2].base_url).toBe('https://api.deepseek.com/v1');

    const again = await runCli(['init', '--yes', '--key-env', '--json'], { home: h, env: e });
    expect(again.code).toBe(0);
    expect((JSON.parse(again.stdout) as { added: string[] }).added).toEqual([]);
    expect(again.stderr).toContain('a provider named "openai" exists already');
  });

  it('asks before changing anything: without a terminal it needs --yes (exit 2)', async () => {
    const h = home();
    const r = await runCli(['init', '--key-env'], { home: h, env: env({ OPENAI_API_KEY: 'sk-openai-0123456789' }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('gateway init --yes');
    expect((await runCli(['providers', 'list', '--json'], { home: h })).stdout.trim()).toBe('[]');
  });

  // On Linux a dead D-Bus address makes the Secret Service unreachable; other OSes have a keychain.
  it.runIf(process.platform === 'linux')('without a keychain, says so and points at --key-env, adding nothing', async () => {
    const h = home();
    const r = await runCli(['init', '--yes'], {
      home: h,
      env: env({ OPENAI_API_KEY: 'sk-openai-0123456789', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' }),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No usable OS keychain');
    expect(r.stderr).toContain('gateway init --key-env');
    // No plan that could not happen is shown first.
    expect(r.stderr).not.toContain('copied to the OS keychain');
    expect((await runCli(['providers', 'list', '--json'], { home: h })).stdout.trim()).toBe('[]');
  });

  it('with nothing in the environment, says what it looked for', async () => {
    const h = home();
    const r = await runCli(['init', '--yes'], { home: h, env: env({}) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('No provider keys in the environment');
    expect(r.stderr).toContain('OPENAI_API_KEY');
  });
});
