/**
 * A provider secret end to end through the real CLI and a real Secret Service: `providers add
 * --key-stdin` stores it in the keychain, a gateway started with `gateway start` reads it from there to
 * serve a call, upstream errors that echo it reach neither the client nor the audit log, it is in no
 * file under the data home and in no output, and `providers remove` deletes the keychain entry.
 *
 * On headless Linux run it as `scripts/with-keyring.sh npx vitest run test/integration/keychain-e2e.test.ts`.
 * Without a usable keychain the keychain test skips, or fails when GATEWAY_REQUIRE_KEYRING=1 (CI).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { openKeychain, probeKeychain } from '../../core/secrets/keychain.ts';
import { Store } from '../../core/storage/index.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';

const BIN = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));
const required = process.env.GATEWAY_REQUIRE_KEYRING === '1';

const scratch = mkdtempSync(path.join(tmpdir(), 'gw-keychain-e2e-'));
const availability = await probeKeychain(scratch);
const missing = availability.ok
  ? ''
  : `no usable OS keychain here (${availability.reason}); on headless Linux run the tests under scripts/with-keyring.sh`;

function needKeychain(ctx: TestContext): void {
  if (availability.ok) return;
  if (required) throw new Error(`GATEWAY_REQUIRE_KEYRING=1 but ${missing}`);
  ctx.skip(`${missing} (GATEWAY_REQUIRE_KEYRING=1 turns this skip into a failure)`);
}

const children = new Set<ChildProcess>();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const fn of cleanups.reverse()) await fn();
  rmSync(scratch, { recursive: true, force: true });
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `gateway ARGS` to completion, with `input` on stdin. */
function cli(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Files under `dir` whose bytes contain `needle` (as UTF-8, and as UTF-16LE for good measure). */
function filesContaining(dir: string, needle: string): string[] {
  const utf8 = Buffer.from(needle, 'utf8');
  const utf16 = Buffer.from(needle, 'utf16le');
  return filesUnder(dir).filter((f) => {
    const bytes = readFileSync(f);
    return bytes.includes(utf8) || bytes.includes(utf16);
  });
}

async function post(url: string, key: string, body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

describe('provider secret in the real keychain, end to end through the CLI', () => {
  it('stores, serves with, never leaks, and deletes the secret', async (ctx) => {
    needKeychain(ctx);
    // Not shaped like any known key format, so only scrubbing by value can hide it.
    const SECRET = `e2e-upstream-${randomBytes(20).toString('hex')}`;
    const home = path.join(scratch, 'home');
    const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_HOME: home, NO_COLOR: '1' };
    delete env.NODE_OPTIONS;
    const outputs: Array<{ what: string; text: string }> = [];
    const record = (what: string, r: CliResult) => outputs.push({ what: `${what} stdout`, text: r.stdout }, { what: `${what} stderr`, text: r.stderr });

    const up: FakeUpstream = await startOpenAIUpstream({ models: ['gpt-4o-mini'], requireKey: SECRET });
    cleanups.push(() => up.close());

    // 1. Store through the CLI.
    const add = await cli(['providers', 'add', 'up', '--type', 'openai', '--base-url', up.url, '--models', 'gpt-4o-mini', '--key-stdin'], env, SECRET);
    record('providers add', add);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toMatch(/Provider "up" added/);
    cleanups.push(async () => (await openKeychain(home)).delete('up').catch(() => false));

    // 2. Read it back from the keychain itself: it is there, under this data home's namespace.
    const kc = await openKeychain(home);
    expect(await kc.get('up')).toBe(SECRET);
    // The store knows only where the secret is, and a gateway key is made the quick way (in-process).
    const setup = Store.open(home);
    let gwKey: string;
    try {
      expect(setup.providers.get('up')).toMatchObject({ keySource: 'keychain', keyEnv: null });
      gwKey = setup.keys.create({ name: 'e2e' }).secret;
    } finally {
      setup.close();
    }
    writeFileSync(path.join(home, 'settings.json'), `${JSON.stringify({ audit: { storeBodies: true } }, null, 2)}\n`);

    // 3. Start the gateway as the user would; its stdout and stderr are "the log".
    const gateway = spawn(process.execPath, [BIN, 'start', '--no-tui', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(gateway);
    let gwOut = '';
    let gwErr = '';
    gateway.stdout.on('data', (c: Buffer) => (gwOut += c.toString('utf8')));
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`gateway did not start: ${gwErr}`)), 15_000);
      gateway.stderr.on('data', (c: Buffer) => {
        gwErr += c.toString('utf8');
        const m = /gateway listening on (http:\/\/\S+\/v1)/.exec(gwErr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      gateway.on('exit', (code) => reject(new Error(`gateway exited early (${code}): ${gwErr}`)));
    });
    const exited = new Promise<number | null>((resolve) => gateway.on('exit', (code) => resolve(code)));

    try {
      // 4. A call that succeeds: the fake demands SECRET, so the key came from the keychain.
      const ok = await post(`${baseUrl}/chat/completions`, gwKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello keychain' }] });
      expect(ok.status, ok.text).toBe(200);
      expect(JSON.parse(ok.text).choices[0].message.content).toBe('Echo: hello keychain');
      expect(up.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
      const okId = ok.headers.get('x-request-id') ?? '';

      // 5. Upstream errors that echo the key back.
      const echo = (status: number, code: string) => ({
        kind: 'status' as const,
        status,
        body: { error: { message: `Key ${SECRET} was rejected (status ${status}).`, type: 'invalid_request_error', param: null, code } },
      });
      up.queueFault(echo(400, 'echo_400'));
      const bad = await post(`${baseUrl}/chat/completions`, gwKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'make it fail' }] });
      expect(bad.status).toBe(400);
      expect(bad.text).not.toContain(SECRET);
      const badErr = JSON.parse(bad.text).error as { message: string; code: string };
      expect(badErr.code).toBe('echo_400');
      expect(badErr.message).toContain('[redacted]');
      expect(badErr.message).toMatch(/was rejected \(status 400\)/);
      const badId = bad.headers.get('x-request-id') ?? '';

      up.queueFault(echo(400, 'echo_stream'));
      const badStream = await post(`${baseUrl}/chat/completions`, gwKey, { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream fail' }] });
      expect(badStream.status).toBe(400);
      expect(badStream.text).not.toContain(SECRET);
      expect(JSON.parse(badStream.text).error.message).toContain('[redacted]');
      const badStreamId = badStream.headers.get('x-request-id') ?? '';

      up.queueFault(echo(401, 'invalid_api_key'));
      const rejected = await post(`${baseUrl}/chat/completions`, gwKey, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'provider says no' }] });
      expect(rejected.status).toBe(502);
      expect(rejected.text).not.toContain(SECRET);
      const rejErr = JSON.parse(rejected.text).error as { message: string; code: string };
      expect(rejErr.code).toBe('upstream_error');
      expect(rejErr.message).toMatch(/\bup\b/);
      const rejectedId = rejected.headers.get('x-request-id') ?? '';

      // 6. The audit rows, through the admin API (which also flushes the writer).
      const serverJson = JSON.parse(readFileSync(path.join(home, 'server.json'), 'utf8')) as { url: string };
      const adminToken = readFileSync(path.join(home, 'admin-token'), 'utf8').trim();
      for (const [id, status] of [[okId, 200], [badId, 400], [badStreamId, 400], [rejectedId, 502]] as const) {
        const r = await fetch(`${serverJson.url}/admin/logs/${id}`, { headers: { authorization: `Bearer ${adminToken}` } });
        const text = await r.text();
        expect(r.status, text).toBe(200);
        expect(text).not.toContain(SECRET);
        const row = JSON.parse(text) as { status: number; error_message: string | null; attempt_list: Array<{ error: string | null }> };
        expect(row.status).toBe(status);
        if (status !== 200) {
          expect(row.error_message).toContain('[redacted]');
          expect(row.attempt_list.length).toBeGreaterThan(0);
        }
      }

      // 7. While it runs (WAL and shared-memory files present, server.json written): no file holds it.
      const running = filesUnder(home).map((f) => path.basename(f));
      expect(running).toEqual(expect.arrayContaining(['gateway.db', 'gateway.db-wal', 'gateway.db-shm', 'admin-token', 'settings.json', 'server.json']));
      expect(filesContaining(home, SECRET)).toEqual([]);
    } finally {
      gateway.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    outputs.push({ what: 'gateway stdout', text: gwOut }, { what: 'gateway stderr', text: gwErr });
    // The log is real: one line per call.
    expect(gwOut.trim().split('\n').length).toBeGreaterThanOrEqual(4);
    expect(gwErr).toMatch(/Stopping: letting calls in flight finish/);

    // 8. After a graceful stop: still in no file, and not in what `gateway logs` prints.
    const after = filesUnder(home).map((f) => path.basename(f));
    expect(after).toEqual(expect.arrayContaining(['gateway.db', 'admin-token', 'settings.json']));
    expect(filesContaining(home, SECRET)).toEqual([]);
    const logs = await cli(['logs', '--json'], env);
    record('logs --json', logs);
    expect(logs.code, logs.stderr).toBe(0);
    const rows = logs.stdout.trim().split('\n').map((l) => JSON.parse(l) as { status: number; error_message: string | null });
    expect(rows.map((r) => r.status).sort()).toEqual([200, 400, 400, 502]);

    // 9. Remove: the keychain entry goes with the provider.
    const remove = await cli(['providers', 'remove', 'up'], env);
    record('providers remove', remove);
    expect(remove.code, remove.stderr).toBe(0);
    expect(remove.stderr).not.toMatch(/Warning/);
    expect(await (await openKeychain(home)).get('up')).toBeNull();
    const check = Store.open(home);
    try {
      expect(check.providers.list()).toEqual([]);
    } finally {
      check.close();
    }

    for (const o of outputs) expect(o.text, `${o.what} leaks the secret`).not.toContain(SECRET);
    expect(filesContaining(home, SECRET)).toEqual([]);
    if (process.platform !== 'win32') expect(statSync(home).mode & 0o777).toBe(0o700);
  }, 60_000);
});

describe.runIf(process.platform === 'linux')('without a usable keychain', () => {
  it('`providers add --key-stdin` fails with exit 1, offers --key-env, and adds nothing', async () => {
    const SECRET = `e2e-nokeychain-${randomBytes(16).toString('hex')}`;
    const home = path.join(scratch, 'no-keychain-home');
    mkdirSync(home, { mode: 0o700 });
    const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_HOME: home, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' };
    delete env.NODE_OPTIONS;
    const started = performance.now();
    const r = await cli(['providers', 'add', 'up', '--type', 'openai', '--base-url', 'http://127.0.0.1:9/v1', '--models', 'gpt-4o-mini', '--key-stdin'], env, SECRET);
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/keychain/i);
    expect(r.stderr).toMatch(/--key-env/);
    expect(r.stderr).toMatch(/D-Bus/);
    expect(r.stdout + r.stderr).not.toContain(SECRET);

    const before = Store.open(home);
    try {
      expect(before.providers.list()).toEqual([]);
    } finally {
      before.close();
    }
    expect(filesContaining(home, SECRET)).toEqual([]);

    // The offered way out works.
    const viaEnv = await cli(['providers', 'add', 'up', '--type', 'openai', '--base-url', 'http://127.0.0.1:9/v1', '--models', 'gpt-4o-mini', '--key-env', 'UP_KEY'], env);
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const after = Store.open(home);
    try {
      expect(after.providers.list()).toEqual([expect.objectContaining({ name: 'up', keySource: 'env', keyEnv: 'UP_KEY' })]);
    } finally {
      after.close();
    }
  });
});
