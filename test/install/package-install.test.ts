/**
 * The published package, as a user gets it: `npm pack` (whose `prepack` builds dist/), installed into a
 * temporary prefix by the machine's own npm (the system one, on the system Node, as `npm install -g` would
 * run), then used from a temporary folder with no checkout in sight: `--version`, `start --demo` and a chat
 * call through the installed command. The installed command runs on a Node >= 22.19 first on PATH (the
 * pinned one, as a user with a current Node has); on the system Node, if that is older, it must refuse
 * with advice for an installed package, not for a checkout.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';
import { startShell, type Shell } from './shell.ts';

const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', (err) => (stderr += String(err)));
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** The machine's own npm and node: the first on a PATH without this checkout's node_modules/.bin. */
function systemTool(name: string): string | null {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d && !d.startsWith(REPO_ROOT));
  for (const d of [...dirs, '/usr/local/bin', '/usr/bin', '/bin']) {
    const p = path.join(d, name);
    if (existsSync(p)) return p;
  }
  return null;
}

function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_/i.test(k) && !/^(NODE_OPTIONS|VITEST.*|INIT_CWD|GATEWAY_.*)$/.test(k)) env[k] = v;
  }
  return env;
}

/**
 * Packing builds dist/ and installing fills the npm cache and needs the registry: `npm test` changes
 * nothing on the machine, so this runs under `npm run test:all` (GATEWAY_TEST_PACKAGE=1) and in CI.
 */
const ci = process.env.CI;
const ENABLED = (ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false') || process.env.GATEWAY_TEST_PACKAGE === '1';

const systemNpm = systemTool('npm');
const systemNode = systemTool('node');

let tmp: string;
let prefix: string;
let nodeDir: string;
const shells: Shell[] = [];

beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'gw-pack-'));
  prefix = path.join(tmp, 'prefix');
  // Only `node` from the checkout: a folder holding a link to the running (pinned) Node binary.
  nodeDir = path.join(tmp, 'node-bin');
  mkdirSync(nodeDir);
  symlinkSync(process.execPath, path.join(nodeDir, 'node'));
});
afterAll(async () => {
  for (const s of shells) await s.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('the packed package, installed with the system npm', { timeout: 300_000 }, () => {
  it('runs --version, start --demo and a chat call from the installed command', async (ctx) => {
    if (!ENABLED) ctx.skip('packs and installs the package (network, npm cache): runs under `npm run test:all` or with GATEWAY_TEST_PACKAGE=1');
    if (!systemNpm) throw new Error('no npm on PATH outside this checkout');
    // 1. Pack, as `npm publish` would (prepack builds dist/).
    const packEnv: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.join(REPO_ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` };
    delete packEnv.NODE_OPTIONS;
    const checkoutManifest = readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8');
    const packed = await run('npm', ['pack', '--pack-destination', tmp, '--json', '--loglevel=error'], { cwd: REPO_ROOT, env: packEnv, timeoutMs: 180_000 });
    expect(packed.status, packed.stderr).toBe(0);
    const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBe(`${pkg.name}-${pkg.version}.tgz`);
    const files = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ files: Array<{ path: string }> }>)[0].files.map((f) => f.path);
    expect(files).toContain('dist/cli/main.js');
    expect(files).toContain('dist/core/storage/audit-thread.js');
    // The bundle the installed command runs (bin/gateway.js), its worker entries beside it.
    for (const f of ['main.js', 'audit-thread.js', 'read-thread.js', 'tokenizer-thread.js']) expect(files).toContain(`dist/start/${f}`);
    expect(files).toContain('core/ui/static/index.html');
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(files.some((f) => f.startsWith('test/'))).toBe(false);

    // 2. Install with the system npm, from a folder far from the checkout, into a private prefix.
    const work = path.join(tmp, 'work');
    mkdirSync(work);
    const cleanPath = ['/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter);
    // The user's own environment (their npm config, proxy and CA settings), minus what npm scripts and the
    // test runner add (npm_* lifecycle variables, loaders) and minus the checkout on PATH.
    const installEnv: NodeJS.ProcessEnv = { ...userEnv(), PATH: `${path.dirname(systemNpm!)}${path.delimiter}${cleanPath}`, npm_config_update_notifier: 'false' };
    const installed = await run(systemNpm!, ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', path.join(tmp, tarball!)], {
      cwd: work,
      env: installEnv,
      timeoutMs: 240_000,
    });
    expect(installed.status, installed.stderr).toBe(0);
    const binDir = path.join(prefix, 'bin');
    for (const name of Object.keys(pkg.bin)) expect(existsSync(path.join(binDir, name)), name).toBe(true);
    const pkgRoot = path.join(prefix, 'lib', 'node_modules', pkg.name);
    expect(existsSync(path.join(pkgRoot, 'cli'))).toBe(false);
    // Its manifest is for the files it has: the library entry point in dist/, no `prepare` (no scripts/ here).
    const shipped = JSON.parse(readFileSync(path.join(pkgRoot, 'package.json'), 'utf8')) as { exports: Record<string, string>; scripts: Record<string, string> };
    expect(shipped.exports['.']).toBe('./dist/core/index.js');
    expect(shipped.scripts.prepare).toBeUndefined();
    const library = await run(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(pkg.name)}); console.log(typeof m.resolveDataHome, typeof m.fetchSnapshot);`], {
      cwd: path.join(prefix, 'lib'),
      env: { ...userEnv(), PATH: cleanPath },
    });
    expect(library.stderr).toBe('');
    expect(library.stdout.trim()).toBe('function function');
    // The checkout's own manifest is back as it was.
    expect(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).toBe(checkoutManifest);
    expect(existsSync(path.join(REPO_ROOT, '.package.json.before-pack'))).toBe(false);

    // 3. Use it: a user's shell, the installed commands and a current Node on PATH, nothing of the checkout.
    const home = path.join(tmp, 'data');
    const env: NodeJS.ProcessEnv = { ...userEnv(), PATH: [binDir, nodeDir, cleanPath].join(path.delimiter), HOME: work, GATEWAY_HOME: home, NO_COLOR: '1' };
    for (const name of Object.keys(pkg.bin)) {
      const v = await run(name, ['--version'], { cwd: work, env });
      expect(v.stderr).toBe('');
      expect(v.stdout.trim()).toBe(pkg.version);
      expect(v.status).toBe(0);
    }

    const gw = startShell('gateway start --demo --no-tui --port 0', env, work);
    shells.push(gw);
    const key = (await gw.waitFor(/^(sk-gw-[A-Za-z0-9]{32,})$/m, 'stdout', 90_000))[1];
    const baseUrl = (await gw.waitFor(/gateway listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/, 'stderr'))[1];
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'from the installed package' }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }>; usage: { cost: number } };
    expect(body.choices[0].message.content).toBe('Demo reply to: from the installed package');
    expect(body.usage.cost).toBeGreaterThan(0);
    // The /ui page's static files ship too.
    expect((await fetch(`${baseUrl.replace(/\/v1$/, '')}/ui/`)).status).toBe(200);
    // Every call is recorded, which the audit worker thread (dist/core/storage/audit-thread.js) does.
    await gw.waitFor(/demo-chat/, 'stdout');
    expect((await gw.stop()).code).toBe(0);
    expect(gw.stderr).not.toMatch(/ERR_|TypeError|stack/i);

    // 4. On the system Node, when it is older than the package needs: advice for an installed package.
    if (systemNode) {
      const sysVersion = (await run(systemNode, ['-p', 'process.versions.node'], { cwd: work, env })).stdout.trim();
      const [maj, min] = sysVersion.split('.').map(Number);
      if (maj < 22 || (maj === 22 && min < 19)) {
        const old = await run(systemNode, [path.join(binDir, 'gateway'), '--version'], { cwd: work, env });
        expect(old.status).toBe(1);
        expect(old.stderr).toContain(`this is Node ${sysVersion}`);
        // Run this very package (its folder): that works whether or not its name is on the registry.
        expect(old.stderr).toContain(`npx -p node@24 -p ${JSON.stringify(pkgRoot)} gateway start`);
        expect(old.stderr).not.toContain('checkout');
      }
    }
  });
});

describe('npm install -g . from the checkout', { timeout: 120_000 }, () => {
  it('links a gateway that runs on an old system Node by re-running itself on the pinned one', async (ctx) => {
    if (!ENABLED) ctx.skip('runs the system npm: under `npm run test:all` or with GATEWAY_TEST_PACKAGE=1');
    if (!systemNpm || !systemNode) throw new Error('no npm/node on PATH outside this checkout');
    const linkPrefix = path.join(tmp, 'link-prefix');
    const cleanPath = ['/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter);
    const env: NodeJS.ProcessEnv = { ...userEnv(), PATH: `${path.dirname(systemNpm)}${path.delimiter}${cleanPath}` };
    const linked = await run(systemNpm, ['install', '-g', '--prefix', linkPrefix, '--no-audit', '--no-fund', '--loglevel=error', '.'], { cwd: REPO_ROOT, env });
    expect(linked.status, linked.stderr).toBe(0);
    const bin = path.join(linkPrefix, 'bin', 'gateway');
    // Only the system Node on PATH, as in a shell that never ran `npm ci`'s Node.
    const useEnv: NodeJS.ProcessEnv = { ...env, GATEWAY_HOME: path.join(tmp, 'link-home') };
    const v = await run(bin, ['--version'], { cwd: tmp, env: useEnv });
    expect(v.stderr).toBe('');
    expect(v.stdout.trim()).toBe(pkg.version);
    expect(v.status).toBe(0);
    // Exit codes pass through the re-run: a failure stays 1, bad usage stays 2.
    expect((await run(bin, ['keys', 'enable', 'nobody'], { cwd: tmp, env: useEnv })).status).toBe(1);
    expect((await run(bin, ['no-such-command'], { cwd: tmp, env: useEnv })).status).toBe(2);
  });
});
