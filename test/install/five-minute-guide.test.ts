/**
 * The README's "Five-minute guide", run as written by bash, with a fake OpenAI upstream in place of the
 * real provider (reached through `OPENAI_BASE_URL`, which `gateway init` honours) and `gateway` on PATH the
 * way `npm install -g` links it. The only edits: the `npm install -g` line is that PATH entry, `init` gets
 * `--yes` (no terminal to answer it) and, without a usable keychain, `--key-env` (the guide's own
 * alternative). Also: the `curl` that `start --demo` prints works as pasted, on the first run and later ones.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeKeychain } from '../../core/secrets/keychain.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { GATEWAY_BIN, REPO_ROOT } from '../support/cli.ts';
import { startShell, type Shell } from './shell.ts';

const PROVIDER_KEY = 'sk-fake-provider-key-0123456789abcdef';

let tmp: string;
let binDir: string;
let upstream: FakeUpstream;
const shells: Shell[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'gw-guide-'));
  binDir = path.join(tmp, 'bin');
  mkdirSync(binDir);
  // What `npm install -g` leaves on PATH: a `gateway` link to the entry point.
  symlinkSync(GATEWAY_BIN, path.join(binDir, 'gateway'));
  upstream = await startOpenAIUpstream({ requireKey: PROVIDER_KEY });
});
afterAll(async () => {
  for (const s of shells) await s.stop();
  await upstream.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A fresh user's environment: only what a shell has, plus the provider key they already use. */
function userEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: [binDir, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter),
    HOME: path.join(home, 'user'),
    GATEWAY_HOME: home,
    NO_COLOR: '1',
    ...extra,
  };
  // A keychain test session (scripts/with-keyring.sh) lives on this bus.
  for (const k of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR']) if (process.env[k]) env[k] = process.env[k];
  return env;
}

function guideBlock(): string {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Five-minute guide'));
  const m = /```sh\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README has no sh block under "## Five-minute guide"');
  return m[1];
}

/** Async, never spawnSync: the fake upstream answers from this process's event loop. */
function bash(script: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('the README five-minute guide', { timeout: 240_000 }, () => {
  it('runs as written against a fake OpenAI upstream', async () => {
    const home = path.join(tmp, 'guide-home');
    mkdirSync(path.join(home, 'user'), { recursive: true });
    // The guide's `gateway start` listens on the default port; a test must not depend on 4141 being free.
    writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ port: 0 }));
    const env = userEnv(home, { OPENAI_API_KEY: PROVIDER_KEY, OPENAI_BASE_URL: upstream.url });
    const keychain = await probeKeychain(home);

    const lines = guideBlock().split('\n');
    // By name once published; until then the packed tarball (README, "Installing it as a tool").
    const install = lines.findIndex((l) => /^npm install -g (gateway-local|\.\/gateway-local-[\d.]+\.tgz)(\s|$)/.test(l));
    const start = lines.findIndex((l) => /^gateway start(\s|$)/.test(l));
    const init = lines.findIndex((l) => /^gateway init(\s|$)/.test(l));
    expect(install, 'the guide installs the package first').toBe(0);
    expect(init).toBeGreaterThan(install);
    expect(start).toBeGreaterThan(init);

    const before = lines
      .slice(install + 1, start)
      .map((l, i) => (i + install + 1 === init ? l.replace(/^gateway init/, `gateway init --yes${keychain.ok ? '' : ' --key-env'}`) : l))
      .join('\n');
    const r1 = await bash(before, env, home);
    expect(r1.status, r1.stderr).toBe(0);
    expect(r1.stderr).toContain('OPENAI_API_KEY');
    expect(r1.stderr).toMatch(/Added "openai"/);

    // Terminal 1.
    const gw = startShell(lines[start], env, home);
    shells.push(gw);
    await gw.waitFor(/gateway listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/, 'stderr');

    // Terminal 2: a new shell with the same environment, in a folder where `require("openai")` resolves.
    const after = lines.slice(start + 1).join('\n');
    const r2 = await bash(after, env, REPO_ROOT);
    expect(r2.status, `${r2.stdout}\n${r2.stderr}`).toBe(0);
    expect(r2.stderr).toContain('Asking the running gateway');
    expect(r2.stdout).toMatch(/^ok {3}openai: reachable, key accepted, a tiny call to \S+ answered/m);
    // The SDK's answer and its cost, printed by the guide's `node -e`.
    const sdkLine = r2.stdout.split('\n').find((l) => /\s\d+(\.\d+)?(e-\d+)?$/.test(l) && !l.startsWith('ok'));
    expect(sdkLine, r2.stdout).toBeDefined();
    expect(Number(sdkLine!.split(' ').at(-1))).toBeGreaterThan(0);
    expect(r2.stdout).toMatch(/mytool/);
    expect(r2.stdout).toMatch(/gpt-4o-mini/);

    // The provider got its own key on every call, never the tool's gateway key.
    const auths = upstream.requests.map((q) => q.headers.authorization);
    expect(auths.length).toBeGreaterThan(0);
    for (const a of auths) expect(a).toBe(`Bearer ${PROVIDER_KEY}`);

    expect((await gw.stop()).code).toBe(0);
    if (keychain.ok) await bash('gateway providers remove openai', env, home);
  });
});

describe('the curl that start --demo prints', { timeout: 120_000 }, () => {
  it('works as pasted, on the first run (the new key) and on later ones (read from demo-key)', async () => {
    const home = path.join(tmp, 'demo-home');
    mkdirSync(home);
    const env = userEnv(home);
    for (const run of [1, 2]) {
      const gw = startShell('gateway start --demo --no-tui --port 0', env, home);
      shells.push(gw);
      const curl = (await gw.waitFor(/^(curl .*)$/m, 'stderr'))[1];
      if (run === 1) expect(curl).toMatch(/Bearer sk-gw-[A-Za-z0-9]{32,}"/);
      else expect(curl).toContain('$(cat ');
      const r = await bash(curl, env, tmp);
      expect(r.status, r.stderr).toBe(0);
      const body = JSON.parse(r.stdout) as { choices: Array<{ message: { content: string } }> };
      expect(body.choices[0].message.content).toBe('Demo reply to: hi');
      expect((await gw.stop()).code).toBe(0);
    }
  });
});

