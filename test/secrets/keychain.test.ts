/**
 * The keychain store against the real OS store. On headless Linux run it as
 * `scripts/with-keyring.sh npx vitest run test/secrets`, which provides a throwaway Secret Service.
 * Without a usable store the real-store tests skip, or fail when GATEWAY_REQUIRE_KEYRING=1 (CI sets it,
 * so a broken CI setup cannot pass by skipping everything).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import {
  DEFAULT_PROBE_TIMEOUT_MS,
  keychainService,
  openKeychain,
  probeKeychain,
  type KeychainStore,
} from '../../core/secrets/keychain.ts';
import { KeychainUnavailableError } from '../../core/secrets/secret-store.ts';

const keychainModule = fileURLToPath(new URL('../../core/secrets/keychain.ts', import.meta.url));
const required = process.env.GATEWAY_REQUIRE_KEYRING === '1';

const scratch = mkdtempSync(path.join(tmpdir(), 'gateway-secrets-test-'));
const homeA = path.join(scratch, 'home-a');
const homeB = path.join(scratch, 'home-b');
mkdirSync(homeA);
mkdirSync(homeB);

const availability = await probeKeychain(homeA);
const missing = availability.ok
  ? ''
  : `no usable OS keychain here (${availability.reason}); on headless Linux run the tests under scripts/with-keyring.sh`;

/** Real-store tests call this first: skip without a keychain, unless CI demands one. */
function needKeychain(ctx: TestContext): void {
  if (availability.ok) return;
  if (required) throw new Error(`GATEWAY_REQUIRE_KEYRING=1 but ${missing}`);
  ctx.skip(`${missing} (GATEWAY_REQUIRE_KEYRING=1 turns this skip into a failure)`);
}

const opened: Array<{ store: KeychainStore; accounts: string[] }> = [];

async function open(home: string, ...accounts: string[]): Promise<KeychainStore> {
  const store = await openKeychain(home);
  opened.push({ store, accounts });
  return store;
}

afterAll(async () => {
  // Tests may run against a developer's real keyring: leave nothing behind.
  if (availability.ok) {
    for (const { store, accounts } of opened) {
      for (const account of accounts) await store.delete(account).catch(() => false);
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe('keychainService', () => {
  it('is gateway-llm: plus 16 hex digits, stable for a home', () => {
    expect(keychainService(homeA)).toMatch(/^gateway-llm:[0-9a-f]{16}$/);
    expect(keychainService(homeA)).toBe(keychainService(homeA));
  });

  it('differs between data homes', () => {
    expect(keychainService(homeA)).not.toBe(keychainService(homeB));
  });

  it('names the folder, not the spelling: relative, trailing slash, symlink', () => {
    const link = path.join(scratch, 'link-to-a');
    symlinkSync(homeA, link);
    const service = keychainService(homeA);
    expect(keychainService(`${homeA}/`)).toBe(service);
    expect(keychainService(path.join(homeA, '..', 'home-a'))).toBe(service);
    expect(keychainService(path.relative(process.cwd(), homeA))).toBe(service);
    expect(keychainService(link)).toBe(service);
  });

  it('does not change when a not-yet-created home is created later', () => {
    const link = path.join(scratch, 'link-to-b');
    symlinkSync(homeB, link);
    const future = path.join(link, 'not-yet');
    const before = keychainService(future);
    mkdirSync(future);
    expect(keychainService(future)).toBe(before);
    expect(keychainService(path.join(homeB, 'not-yet'))).toBe(before);
  });
});

describe('keychain store against the real OS store', () => {
  it.runIf(required)('GATEWAY_REQUIRE_KEYRING=1: a usable keychain is reachable', () => {
    expect(availability, missing).toEqual({ ok: true });
  });

  it('probe reports ok', async (ctx) => {
    needKeychain(ctx);
    const started = performance.now();
    expect(await probeKeychain(homeB)).toEqual({ ok: true });
    expect(performance.now() - started).toBeLessThan(DEFAULT_PROBE_TIMEOUT_MS);
  });

  it('stores, reads, overwrites and deletes', async (ctx) => {
    needKeychain(ctx);
    const store = await open(homeA, 'openai');
    expect(store.kind).toBe('keychain');
    expect(store.service).toBe(keychainService(homeA));
    expect(await store.get('openai')).toBeNull();
    await store.set('openai', 'sk-test-first');
    expect(await store.get('openai')).toBe('sk-test-first');
    await store.set('openai', 'sk-test-second');
    expect(await store.get('openai')).toBe('sk-test-second');
    expect(await store.delete('openai')).toBe(true);
    expect(await store.get('openai')).toBeNull();
    expect(await store.delete('openai')).toBe(false);
  });

  it('keeps unusual secrets intact', async (ctx) => {
    needKeychain(ctx);
    const store = await open(homeA, 'odd/provider name');
    const secret = 'sk-ünïcødé "quotes" \\ back\nnewline ' + 'x'.repeat(2000);
    await store.set('odd/provider name', secret);
    expect(await store.get('odd/provider name')).toBe(secret);
    expect(await store.delete('odd/provider name')).toBe(true);
  });

  it('two data homes never see or overwrite each other', async (ctx) => {
    needKeychain(ctx);
    const a = await open(homeA, 'anthropic');
    const b = await open(homeB, 'anthropic');
    await a.set('anthropic', 'sk-ant-home-a');
    expect(await b.get('anthropic')).toBeNull();
    await b.set('anthropic', 'sk-ant-home-b');
    expect(await a.get('anthropic')).toBe('sk-ant-home-a');
    expect(await b.get('anthropic')).toBe('sk-ant-home-b');
    expect(await b.delete('anthropic')).toBe(true);
    expect(await a.get('anthropic')).toBe('sk-ant-home-a');
    expect(await a.delete('anthropic')).toBe(true);
  });
});

/**
 * Runs `probeKeychain`, then a `set` of a recognisable secret, in a fresh Node process with the given
 * environment (the native library reads DBUS_SESSION_BUS_ADDRESS when it connects, so this test must
 * not change the test process's own environment) and reports what came out.
 */
async function runIsolated(
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ probe: unknown; probeMs: number; error: Record<string, unknown>; stdout: string; wallMs: number }> {
  const script = `
    const { probeKeychain, openKeychain } = await import(${JSON.stringify(keychainModule)});
    const home = ${JSON.stringify(homeA)};
    let t = performance.now();
    const probe = await probeKeychain(home, { timeoutMs: ${timeoutMs} });
    const probeMs = performance.now() - t;
    let error = null;
    try {
      const store = await openKeychain(home, { timeoutMs: ${timeoutMs} });
      await store.set('openai', 'sk-THIS-MUST-NOT-LEAK-123');
    } catch (e) {
      error = { name: e.name, code: e.code, message: e.message, reason: e.reason, detail: e.detail };
    }
    process.stdout.write(JSON.stringify({ probe, probeMs, error }));
  `;
  const started = performance.now();
  const child = spawn(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  // The whole child must end well before the test's own timeout: a hang here is the bug under test.
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs * 2 + 10_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`probe child exited with ${code}: ${stderr}`);
  const parsed = JSON.parse(stdout) as { probe: unknown; probeMs: number; error: Record<string, unknown> };
  return { ...parsed, stdout, wallMs };
}

describe.runIf(process.platform === 'linux')('keychain without a usable Secret Service', () => {
  it('answers ok:false quickly when DBUS_SESSION_BUS_ADDRESS points nowhere', async () => {
    const timeoutMs = DEFAULT_PROBE_TIMEOUT_MS;
    const r = await runIsolated(
      { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${path.join(scratch, 'no-such-bus')}` },
      timeoutMs,
    );
    expect(r.probe).toEqual({ ok: false, reason: expect.stringMatching(/D-Bus/) });
    expect(r.probeMs).toBeLessThan(timeoutMs);
    expect(r.error).toMatchObject({ name: 'KeychainUnavailableError', code: 'keychain_unavailable' });
    expect(r.error.message).toMatch(/--key-env VAR/);
    expect(r.stdout).not.toContain('THIS-MUST-NOT-LEAK');
  });

  it('gives up within its timeout when the bus accepts connections but never answers', async () => {
    // This is the case that hangs the native library forever (measured): only a killable child helps.
    const socketPath = path.join(scratch, 'silent-bus.sock');
    const held: net.Socket[] = [];
    const server = net.createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const timeoutMs = 1_500;
      const r = await runIsolated({ ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${socketPath}` }, timeoutMs);
      expect(r.probe).toEqual({ ok: false, reason: expect.stringMatching(/did not answer within 1.5 s/) });
      expect(r.probeMs).toBeGreaterThanOrEqual(timeoutMs - 50);
      expect(r.probeMs).toBeLessThan(timeoutMs + 1_000);
      expect(r.error).toMatchObject({ name: 'KeychainUnavailableError', code: 'keychain_unavailable' });
      expect(r.stdout).not.toContain('THIS-MUST-NOT-LEAK');
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('errors', () => {
  it.runIf(process.platform === 'linux')('are KeychainUnavailableError and never contain the secret', async () => {
    // A store whose helper cannot even reach a bus, run in this process: the bus address is only read by
    // the helper child, which inherits the environment at spawn time.
    const saved = process.env.DBUS_SESSION_BUS_ADDRESS;
    process.env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${path.join(scratch, 'absent-bus')}`;
    try {
      const store = await openKeychain(homeA, { timeoutMs: 5_000 });
      const err: unknown = await store.set('openai', 'sk-super-secret-value').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KeychainUnavailableError);
      const text = JSON.stringify({ ...(err as KeychainUnavailableError), message: (err as Error).message });
      expect(text).not.toContain('sk-super-secret-value');
    } finally {
      if (saved === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS;
      else process.env.DBUS_SESSION_BUS_ADDRESS = saved;
    }
  });

  it('rejects an empty account before touching the keychain', async () => {
    const store = await openKeychain(homeA);
    await expect(store.get('')).rejects.toBeInstanceOf(TypeError);
  });
});
