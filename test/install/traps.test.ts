/**
 * The traps a new user fell into, one test each, through the real `gateway` command where a user meets
 * them: a provider variable holding a gateway key (refused when added and at request time), a key used
 * the instant it is printed (and `env --new-key` run twice), a second `start` on the same data home (and
 * a stale lock), a corrupt, a read-only and a 0-byte database (each exits 1 at once, naming the file and
 * what to do), and `providers test` asking the running gateway rather than the shell.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync, openSync, writeSync, closeSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Store } from '../../core/storage/index.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import { CLI_TEST_TIMEOUT_MS, GATEWAY_BIN, REPO_ROOT, runCli, startCli, tempHome } from '../support/cli.ts';
import type { RunningCli } from '../support/cli.ts';

const cleanups: Array<() => void | Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function home(): string {
  const h = tempHome('gw-trap-');
  cleanups.push(h.cleanup);
  return h.home;
}

function started(args: string[], h: string, env?: Record<string, string | undefined>): RunningCli {
  const gw = startCli(args, { home: h, env });
  cleanups.push(() => gw.stop('SIGKILL'));
  return gw;
}

/** The base URL, once start has said all it says (its signal handlers are in place after that). */
async function listening(gw: RunningCli): Promise<string> {
  const url = (await gw.waitFor(/gateway listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/, 'stderr'))[1];
  await gw.waitFor(/Stop with Ctrl-C/, 'stderr');
  return url;
}

/**
 * SIGTERM and wait (a loaded machine may take a while to drain and flush; SIGKILL only after 30 s).
 * Known, outside this file's scope: a SIGTERM in the first second after start has printed everything can
 * kill it outright; the tests here make a call first.
 */
async function gracefulStop(gw: RunningCli): Promise<number | string | null> {
  gw.child.kill('SIGTERM');
  const timer = setTimeout(() => gw.child.kill('SIGKILL'), 30_000);
  const { code, signal } = await gw.exited;
  clearTimeout(timer);
  return code ?? `${signal}; stderr: ${gw.stderr}`;
}

const chat = (baseUrl: string, key: string) =>
  fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
const demoChat = (baseUrl: string, key: string) =>
  fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });

/** A database with something in it: a key, made by the CLI. */
async function populatedHome(): Promise<{ h: string; db: string }> {
  const h = home();
  const r = await runCli(['keys', 'create', '--name', 'precious'], { home: h });
  expect(r.code, r.stderr).toBe(0);
  return { h, db: path.join(h, 'gateway.db') };
}

describe('a provider variable holding a gateway key', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('is refused by providers add --key-env, with what to do instead', async () => {
    const h = home();
    const r = await runCli(['providers', 'add', 'openai', '--type', 'openai', '--key-env', 'OPENAI_API_KEY', '--models', 'gpt-4o-mini'], {
      home: h,
      env: { OPENAI_API_KEY: 'sk-gw-abcdefghijklmnopqrstuvwxyz0123456789ABCD' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing --key-env OPENAI_API_KEY');
    expect(r.stderr).toContain('holds a gateway key');
    expect(r.stderr).toMatch(/--key-stdin|gateway init/);
    expect((await runCli(['providers', 'list', '--json'], { home: h })).stdout.trim()).toBe('[]');
  });

  it('is never sent upstream at request time: the 502 names the variable', async () => {
    const upstream = await startOpenAIUpstream({ requireKey: 'sk-real-provider-key-0123456789' });
    cleanups.push(() => upstream.close());
    const h = home();
    const add = await runCli(['providers', 'add', 'openai', '--type', 'openai', '--base-url', upstream.url, '--key-env', 'GW_TRAP_PROVIDER_KEY', '--models', 'gpt-4o-mini'], {
      home: h,
      env: { GW_TRAP_PROVIDER_KEY: 'sk-real-provider-key-0123456789' },
    });
    expect(add.code, add.stderr).toBe(0);
    const key = (await runCli(['keys', 'create', '--name', 'tool'], { home: h })).stdout.trim();
    // The gateway is then started from a shell where that variable was overwritten with a gateway key.
    const gw = started(['start', '--no-tui', '--port', '0'], h, { GW_TRAP_PROVIDER_KEY: key });
    const baseUrl = await listening(gw);
    const res = await chat(baseUrl, key);
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).toContain('$GW_TRAP_PROVIDER_KEY holds a gateway key');
    expect(body.error.message).not.toContain(key);
    expect(upstream.requests.filter((q) => String(q.headers.authorization ?? '').includes('sk-gw-'))).toEqual([]);
  });
});

describe('a key used the instant it is printed', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('works before the config poll has seen it (the unknown key is looked up first)', async () => {
    const t = await startTestGateway({ demo: true });
    cleanups.push(() => t.close());
    // No poll at all: only the look-up on an unknown key can let the new key in.
    t.gw.deps.live.stop();
    const cli = t.openStore();
    const fresh = cli.keys.create({ name: 'fresh' }).secret;
    const res = await demoChat(t.baseUrl, fresh);
    expect(res.status).toBe(200);
    // A rotated key too: the new secret works at once, the old one is refused.
    const rotated = cli.keys.rotate('fresh').secret;
    cli.close();
    await new Promise((r) => setTimeout(r, 30));
    expect((await demoChat(t.baseUrl, rotated)).status).toBe(200);
    expect((await demoChat(t.baseUrl, fresh)).status).toBe(401);
  });

  it('a flood of wrong keys costs one look-up per interval, not one per request', async () => {
    const t = await startTestGateway({ demo: true });
    cleanups.push(() => t.close());
    const live = t.gw.deps.live;
    const lookups = vi.spyOn(t.gw.deps.store.keys, 'findByHash');
    for (let i = 0; i < 100; i++) expect(live.recheckUnknownKey(`nohash${i}`, 1_000_000)).toBeUndefined();
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(live.recheckUnknownKey('nohash', 1_000_000 + 25)).toBeUndefined();
    expect(lookups).toHaveBeenCalledTimes(2);
  });

  it('env --new-key can be re-run: it rotates, says so, and the new key works at once', async () => {
    const h = home();
    const gw = started(['start', '--demo', '--no-tui', '--port', '0'], h);
    const baseUrl = await listening(gw);
    const first = await runCli(['env', '--new-key', 'mytool'], { home: h });
    expect(first.code, first.stderr).toBe(0);
    const k1 = /OPENAI_API_KEY='(sk-gw-[A-Za-z0-9]+)'/.exec(first.stdout)![1];
    expect(first.stdout).toContain(`export OPENAI_BASE_URL='${baseUrl}'`);
    const second = await runCli(['env', '--new-key', 'mytool'], { home: h });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/existed: it has a new secret now \(rotated/);
    const k2 = /OPENAI_API_KEY='(sk-gw-[A-Za-z0-9]+)'/.exec(second.stdout)![1];
    expect(k2).not.toBe(k1);
    expect((await demoChat(baseUrl, k2)).status).toBe(200);
    expect((await demoChat(baseUrl, k1)).status).toBe(401);
  });
});

describe('one gateway per data home', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a second start names the first one’s pid and port, exits 1, and leaves the first untouched', async () => {
    const h = home();
    const first = started(['start', '--demo', '--no-tui', '--port', '0'], h);
    const baseUrl = await listening(first);
    const port = new URL(baseUrl).port;
    const stateBefore = readFileSync(path.join(h, 'server.json'), 'utf8');
    const second = await runCli(['start', '--no-tui', '--port', '0'], { home: h });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.stderr).toContain(`port ${port}`);
    expect(second.stderr).toContain('GATEWAY_HOME');
    expect(readFileSync(path.join(h, 'server.json'), 'utf8')).toBe(stateBefore);
    const key = readFileSync(path.join(h, 'demo-key'), 'utf8').trim();
    expect((await demoChat(baseUrl, key)).status).toBe(200);
    expect(await gracefulStop(first)).toBe(0);
    expect(existsSync(path.join(h, 'gateway.lock'))).toBe(false);
  });

  it('a lock left by a dead process is taken over', async () => {
    const h = home();
    const dead = spawnSync(process.execPath, ['-p', 'process.pid'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout.trim());
    writeFileSync(path.join(h, 'gateway.lock'), JSON.stringify({ pid: deadPid, port: 4141, url: 'http://127.0.0.1:4141' }));
    const gw = started(['start', '--demo', '--no-tui', '--port', '0'], h);
    const baseUrl = await listening(gw);
    const lock = JSON.parse(readFileSync(path.join(h, 'gateway.lock'), 'utf8')) as { pid: number; port: number };
    expect(lock.pid).toBe(gw.child.pid);
    expect(lock.port).toBe(Number(new URL(baseUrl).port));
    // It serves (and, on a loaded machine, is past its first second: see gracefulStop).
    expect((await demoChat(baseUrl, readFileSync(path.join(h, 'demo-key'), 'utf8').trim())).status).toBe(200);
    expect(await gracefulStop(gw)).toBe(0);
  });
});

/** Runs a command to its end, or fails the test if it hangs: "never hangs" is the point. */
async function mustExit(args: string[], h: string): Promise<{ code: number | null; stderr: string }> {
  const r = await runCli(args, { home: h, timeoutMs: 30_000 });
  return { code: r.code, stderr: r.stderr };
}

describe('a database that cannot serve', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('corrupt (a damaged header): every command exits 1 naming the file and what to do', async () => {
    const { h, db } = await populatedHome();
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(100, 0x5a), 0, 100, 0);
    closeSync(fd);
    for (const args of [['keys', 'list'], ['start', '--no-tui', '--port', '0']]) {
      const r = await mustExit(args, h);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(db);
      expect(r.stderr).toMatch(/is damaged/);
      expect(r.stderr).toContain(`mv '${db}'`);
    }
  });

  it('corrupt (a damaged table): start exits 1 naming the file, it does not hang', async () => {
    const { h, db } = await populatedHome();
    // Damage the keys table's own page: the file opens fine and SQLite notices only when start reads the keys.
    const probe = Store.open(h);
    const { rootpage } = probe.db.prepare(`SELECT rootpage FROM sqlite_master WHERE name = 'keys'`).get() as { rootpage: number };
    const pageSize = probe.db.pragma('page_size', { simple: true }) as number;
    probe.db.pragma('wal_checkpoint(TRUNCATE)');
    probe.close();
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0xff), 0, pageSize, (rootpage - 1) * pageSize);
    closeSync(fd);
    const r = await mustExit(['start', '--demo', '--no-tui', '--port', '0'], h);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(db);
    expect(r.stderr).toMatch(/is damaged/);
  });

  it('0 bytes: refused, never silently re-initialised', async () => {
    const { h, db } = await populatedHome();
    writeFileSync(db, '');
    for (const args of [['keys', 'list'], ['start', '--demo', '--no-tui', '--port', '0']]) {
      const r = await mustExit(args, h);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(`${db} is empty (0 bytes)`);
      expect(r.stderr).toContain('Restore it from a backup');
    }
    expect(statSync(db).size).toBe(0);
  });

  it('read-only: exits 1 naming the file and what to check', async (ctx) => {
    const { h, db } = await populatedHome();
    const args = [GATEWAY_BIN, 'keys', 'create', '--name', 'another'];
    let cmd: string;
    let argv: string[];
    if (process.getuid?.() === 0) {
      // Root ignores file modes: make the data home a read-only mount in a private mount namespace, which
      // needs no cleanup and touches nothing outside this command.
      const probe = spawnSync('unshare', ['-m', 'true']);
      if (probe.status !== 0) return ctx.skip('running as root without `unshare -m`: no way to make a file read-only for root here');
      cmd = 'unshare';
      argv = ['-m', 'sh', '-c', `mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"`, h, process.execPath, ...args];
    } else {
      chmodSync(db, 0o444);
      chmodSync(h, 0o555);
      cleanups.push(() => chmodSync(h, 0o755));
      cmd = process.execPath;
      argv = args;
    }
    const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_HOME: h };
    delete env.NODE_OPTIONS;
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(cmd, argv, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${db} cannot be written`);
    expect(r.stderr).toMatch(/read-only|GATEWAY_HOME/);
    // Nothing was lost: the key made before is still there.
    const s = Store.open(h);
    expect(s.keys.list().map((k) => k.name)).toEqual(['precious']);
    s.close();
  });

  it('a data home whose path runs through a file: names it', async () => {
    const h = home();
    writeFileSync(path.join(h, 'file'), '');
    const r = await runCli(['keys', 'list'], { home: path.join(h, 'file', 'home') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(path.join(h, 'file', 'home'));
    expect(r.stderr).toContain('is a file, not a folder');
  });
});

describe('providers test with a gateway running', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("asks the gateway: its environment decides, not the shell's", async () => {
    const upstream = await startOpenAIUpstream({ requireKey: 'sk-gateway-side-key-0123456789' });
    cleanups.push(() => upstream.close());
    const h = home();
    const add = await runCli(['providers', 'add', 'up', '--type', 'openai', '--base-url', upstream.url, '--key-env', 'GW_TRAP_UP_KEY', '--models', 'gpt-4o-mini'], {
      home: h,
      env: { GW_TRAP_UP_KEY: undefined },
    });
    expect(add.code, add.stderr).toBe(0);
    // Without a gateway, the CLI tests with its own shell, where the variable is not set.
    const alone = await runCli(['providers', 'test', '--json'], { home: h, env: { GW_TRAP_UP_KEY: undefined } });
    expect(alone.code).toBe(1);
    expect((JSON.parse(alone.stdout) as Array<{ verdict: string }>)[0].verdict).toBe('no key: $GW_TRAP_UP_KEY is not set in this shell.');

    // The gateway was started where the variable is set: its calls work, and providers test says so.
    const gw = started(['start', '--no-tui', '--port', '0'], h, { GW_TRAP_UP_KEY: 'sk-gateway-side-key-0123456789' });
    await listening(gw);
    const asked = await runCli(['providers', 'test'], { home: h, env: { GW_TRAP_UP_KEY: undefined } });
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stderr).toContain(`Asking the running gateway (pid ${gw.child.pid}`);
    expect(asked.stdout).toMatch(/^ok {3}up: reachable, key accepted, a tiny call to gpt-4o-mini answered/m);
    await gracefulStop(gw);

    // And the other way round: set in the shell, missing in the gateway's environment, is a FAIL.
    const gw2 = started(['start', '--no-tui', '--port', '0'], h, { GW_TRAP_UP_KEY: undefined });
    await listening(gw2);
    const wrongSide = await runCli(['providers', 'test', 'up', '--json'], { home: h, env: { GW_TRAP_UP_KEY: 'sk-gateway-side-key-0123456789' } });
    expect(wrongSide.code).toBe(1);
    expect((JSON.parse(wrongSide.stdout) as Array<{ verdict: string }>)[0].verdict).toBe("no key: $GW_TRAP_UP_KEY is not set in the gateway's environment.");
  });
});
