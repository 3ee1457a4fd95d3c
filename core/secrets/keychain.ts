/**
 * Provider secrets in the OS keychain (macOS Keychain, Windows Credential Manager, the Secret Service
 * on Linux) through `@napi-rs/keyring`.
 *
 * Every keychain call runs in a short-lived child Node process, never in this one. Measured here: with
 * a D-Bus socket that accepts connections but never answers, the native `Entry` constructor blocks its
 * thread forever. On the main thread no timer could fire; in a worker thread `process.exit()` itself
 * hangs waiting for the worker. Only a separate process can be killed, so only that bounds a call.
 * It also keeps the native module out of this process entirely: commands that never touch secrets, and
 * the server's hot path, never load it. The price is a Node start (~50-100 ms) per call, which is fine
 * for something done when a provider is added or the gateway starts.
 *
 * The secret travels to the child on stdin and back on stdout, never in argv or the environment, where
 * other local users could read it (`/proc/PID/cmdline`, `ps`).
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { KeychainUnavailableError, type SecretStore } from './secret-store.ts';

/** The probe is a quick "can we use it at all" check: D-Bus calls can hang with no Secret Service. */
export const DEFAULT_PROBE_TIMEOUT_MS = 3_000;
/**
 * Real operations get longer: on a desktop the OS may show an unlock or "allow access" prompt that a
 * person has to answer (macOS asks again after Node is upgraded, for example).
 */
export const DEFAULT_OPERATION_TIMEOUT_MS = 15_000;

const SERVICE_PREFIX = 'gateway-llm:';

export interface KeychainOptions {
  /** Upper bound for each operation (each probe), child process start included. */
  timeoutMs?: number;
}

export type ProbeResult = { ok: true } | { ok: false; reason: string };

/**
 * The keychain "service" for a data home. Two data homes (say a test's temp folder and the user's real
 * one) must never see or overwrite each other's provider keys, so the service is derived from the
 * canonical absolute path of the data home. Account names are provider names.
 */
export function keychainService(dataHome: string): string {
  const digest = createHash('sha256').update(canonicalPath(dataHome)).digest('hex');
  return SERVICE_PREFIX + digest.slice(0, 16);
}

/**
 * Resolves symlinks in the part of the path that exists and keeps the rest as written. A data home is
 * often named before it is created (first run); a plain `path.resolve` fallback would then hash
 * `/tmp/x` on the first run and `/private/tmp/x` (macOS) once the folder exists, and the keys stored
 * on the first run would seem to vanish.
 */
function canonicalPath(dataHome: string): string {
  const absolute = path.resolve(dataHome);
  const missing: string[] = [];
  let existing = absolute;
  for (;;) {
    try {
      return path.join(realpathSync.native(existing), ...missing);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return absolute;
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

export class KeychainStore implements SecretStore {
  readonly kind = 'keychain' as const;
  readonly service: string;
  readonly timeoutMs: number;
  readonly #modulePath: string;

  constructor(service: string, modulePath: string, timeoutMs: number) {
    this.service = service;
    this.#modulePath = modulePath;
    this.timeoutMs = timeoutMs;
  }

  async get(account: string): Promise<string | null> {
    checkAccount(account);
    const [value] = await this.#run([{ op: 'get', account }]);
    if (value === null || typeof value === 'string') return value;
    throw malformedReply();
  }

  async set(account: string, secret: string): Promise<void> {
    checkAccount(account);
    if (typeof secret !== 'string' || secret === '') throw new TypeError('secret must be a non-empty string');
    await this.#run([{ op: 'set', account, secret }]);
  }

  async delete(account: string): Promise<boolean> {
    checkAccount(account);
    const [deleted] = await this.#run([{ op: 'delete', account }]);
    if (typeof deleted === 'boolean') return deleted;
    throw malformedReply();
  }

  async #run(ops: readonly KeychainOp[]): Promise<HelperValue[]> {
    const outcome = await runHelper(this.#modulePath, this.service, ops, this.timeoutMs);
    if (outcome.ok) return outcome.results;
    throw new KeychainUnavailableError(outcome.reason, outcome.detail === undefined ? undefined : { detail: outcome.detail });
  }
}

/**
 * A `SecretStore` over the OS keychain, namespaced to `dataHome`. It does not touch the keychain yet
 * (call `probeKeychain` for a self-test); it only fails when `@napi-rs/keyring` is not installed.
 */
export async function openKeychain(dataHome: string, opts?: KeychainOptions): Promise<KeychainStore> {
  const modulePath = resolveKeyringModule();
  if (modulePath === null) {
    throw new KeychainUnavailableError('the keychain module `@napi-rs/keyring` is not installed');
  }
  return new KeychainStore(keychainService(dataHome), modulePath, timeoutOf(opts, DEFAULT_OPERATION_TIMEOUT_MS));
}

/**
 * Writes, reads back and deletes a throwaway entry in `dataHome`'s namespace, all in one child process
 * and within the timeout. Never throws: the answer is either `{ ok: true }` or a reason in plain words
 * that the CLI can print next to its `--key-env` offer.
 */
export async function probeKeychain(dataHome: string, opts?: KeychainOptions): Promise<ProbeResult> {
  try {
    const modulePath = resolveKeyringModule();
    if (modulePath === null) return { ok: false, reason: 'the keychain module `@napi-rs/keyring` is not installed' };
    // A per-call account: a CLI and a starting server may probe the same home at once. The leading dot
    // keeps it apart from provider names.
    const account = `.gateway-probe-${process.pid}-${randomBytes(4).toString('hex')}`;
    const value = randomBytes(12).toString('base64url');
    const outcome = await runHelper(
      modulePath,
      keychainService(dataHome),
      [
        { op: 'set', account, secret: value },
        { op: 'get', account },
        { op: 'delete', account },
      ],
      timeoutOf(opts, DEFAULT_PROBE_TIMEOUT_MS),
    );
    if (!outcome.ok) return { ok: false, reason: outcome.reason };
    const [, readBack, deleted] = outcome.results;
    if (readBack !== value) return { ok: false, reason: 'the keychain did not give back the value just written to it' };
    if (deleted !== true) return { ok: false, reason: 'the keychain could not delete the test entry it had just written' };
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `the keychain self-test failed unexpectedly (${errorText(err)})` };
  }
}

// ---------------------------------------------------------------------------------------------------
// The child process.

type KeychainOp =
  | { op: 'get'; account: string }
  | { op: 'set'; account: string; secret: string }
  | { op: 'delete'; account: string };

type HelperValue = string | boolean | null;

type HelperOutcome = { ok: true; results: HelperValue[] } | { ok: false; reason: string; detail?: string };

/**
 * The child's whole program. Plain CommonJS in a string so it runs the same from the TypeScript
 * sources, from a build, and from inside node_modules (where Node refuses to strip types). It reads one
 * JSON request on stdin and writes one JSON reply on stdout. Entries are pinned to the Secret Service
 * on Linux: the library's default would silently fall back to the kernel keyring, which forgets
 * everything at logout or reboot, so a user would lose keys they believe were saved.
 */
const HELPER_SOURCE = String.raw`
'use strict';
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const reply = (value) => process.stdout.write(JSON.stringify(value), () => process.exit(0));
  const message = (e) => {
    const parts = [];
    for (let cur = e, depth = 0; cur && depth < 5; cur = cur.cause, depth++) {
      const text = String(cur.message || cur);
      if (!parts.some((p) => p.includes(text))) parts.push(text);
    }
    return parts.join(': ');
  };
  let request;
  try { request = JSON.parse(input); } catch (e) { return reply({ ok: false, stage: 'request', message: message(e) }); }
  let Entry;
  try { ({ Entry } = require(request.module)); } catch (e) { return reply({ ok: false, stage: 'load', message: message(e) }); }
  const options = process.platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined;
  const entries = new Map();
  const results = [];
  for (const op of request.ops) {
    try {
      let entry = entries.get(op.account);
      if (!entry) { entry = new Entry(request.service, op.account, options); entries.set(op.account, entry); }
      if (op.op === 'get') results.push(entry.getPassword());
      else if (op.op === 'set') { entry.setPassword(op.secret); results.push(null); }
      else if (op.op === 'delete') results.push(entry.deleteCredential());
      else throw new Error('unknown operation');
    } catch (e) {
      return reply({ ok: false, stage: op.op, message: message(e) });
    }
  }
  reply({ ok: true, results });
});
`;

let resolvedModule: string | null | undefined;

/** Resolution only: the module itself is loaded by the child, never here. */
function resolveKeyringModule(): string | null {
  if (resolvedModule === undefined) {
    try {
      resolvedModule = createRequire(import.meta.url).resolve('@napi-rs/keyring');
    } catch {
      resolvedModule = null;
    }
  }
  return resolvedModule;
}

const MAX_OUTPUT_BYTES = 1 << 20;

function runHelper(modulePath: string, service: string, ops: readonly KeychainOp[], timeoutMs: number): Promise<HelperOutcome> {
  const secrets = ops.flatMap((o) => (o.op === 'set' ? [o.secret] : []));
  const scrub = (text: string): string => secrets.reduce((t, s) => (s ? t.split(s).join('[secret]') : t), text);

  const env: NodeJS.ProcessEnv = { ...process.env };
  // The child runs only the code above; a user's NODE_OPTIONS (preloads, inspectors) would just slow it.
  delete env.NODE_OPTIONS;
  if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';

  return new Promise<HelperOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: HelperOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };

    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(process.execPath, ['--input-type=commonjs', '-e', HELPER_SOURCE], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env,
        windowsHide: true,
      });
    } catch (err) {
      resolve({ ok: false, reason: 'could not start a helper process to talk to the keychain', detail: errorText(err) });
      return;
    }

    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ ok: false, reason: timeoutReason(timeoutMs) });
    }, timeoutMs);

    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let outBytes = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes <= MAX_OUTPUT_BYTES) stdout.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.reduce((n, b) => n + b.length, 0) < 4096) stderr.push(chunk);
    });
    child.on('error', (err) => {
      finish({ ok: false, reason: 'could not start a helper process to talk to the keychain', detail: errorText(err) });
    });
    child.on('close', (code, signal) => {
      const reply = parseReply(Buffer.concat(stdout).toString('utf8'));
      if (reply === null) {
        const why = signal ? `signal ${signal}` : `exit code ${code}`;
        const err = scrub(Buffer.concat(stderr).toString('utf8').trim().split('\n').slice(-3).join(' '));
        finish({ ok: false, reason: `the keychain helper process ended without an answer (${why})`, detail: err || undefined });
        return;
      }
      if (reply.ok) {
        finish({ ok: true, results: reply.results });
        return;
      }
      const detail = scrub(reply.message);
      finish({ ok: false, reason: describeFailure(reply.stage, detail), detail });
    });

    // EPIPE here means the child already died; 'close' reports why.
    child.stdin?.on('error', () => {});
    child.stdin?.end(JSON.stringify({ module: modulePath, service, ops }));
  });
}

type Reply = { ok: true; results: HelperValue[] } | { ok: false; stage: string; message: string };

function parseReply(text: string): Reply | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  if (r.ok === true && Array.isArray(r.results)) {
    const results: HelperValue[] = [];
    for (const item of r.results as unknown[]) {
      if (item === null || typeof item === 'string' || typeof item === 'boolean') results.push(item);
      else return null;
    }
    return { ok: true, results };
  }
  if (r.ok === false) return { ok: false, stage: String(r.stage ?? ''), message: String(r.message ?? '') };
  return null;
}

function timeoutReason(timeoutMs: number): string {
  const seconds = `${Math.round(timeoutMs / 100) / 10} s`;
  if (process.platform === 'linux') {
    return `the keychain did not answer within ${seconds} (the D-Bus session bus or the Secret Service is not responding)`;
  }
  return `the keychain did not answer within ${seconds} (is it waiting for an unlock or access prompt?)`;
}

/**
 * Turns the platform's error text into a plain sentence. The patterns are the texts seen from
 * `@napi-rs/keyring` 2.1 (D-Bus errors on Linux, keyring-rs' own wording elsewhere); an unknown text is
 * passed on as it is, secret already scrubbed.
 */
function describeFailure(stage: string, detail: string): string {
  if (stage === 'load') return 'the keychain module `@napi-rs/keyring` could not be loaded on this platform';
  const has = (re: RegExp): boolean => re.test(detail);
  if (has(/autolaunch|DBUS_SESSION_BUS_ADDRESS|Failed to connect to socket|Connection refused|No such file or directory/i)) {
    return 'no D-Bus session bus is reachable, so no Secret Service either (headless Linux, SSH session or container?)';
  }
  if (has(/not provided by any \.service files|ServiceUnknown|NameHasNoOwner/i)) {
    return 'no Secret Service is running (headless Linux?)';
  }
  if (has(/no result found/i) && stage === 'set') {
    return 'the Secret Service has no default keyring to store into (no "login" keyring has been created)';
  }
  if (has(/locked|prompt|dismissed|user canceled|user cancelled|interaction not allowed/i)) {
    return 'the keychain is locked and was not unlocked';
  }
  if (has(/NoReply|timed? ?out/i)) return 'the Secret Service did not reply';
  if (has(/AccessDenied|access denied|not permitted|Couldn't access/i)) return 'access to the keychain was denied';
  return `the keychain reported an error: ${detail || 'no details given'}`;
}

function checkAccount(account: string): void {
  if (typeof account !== 'string' || account === '') throw new TypeError('account must be a non-empty string');
}

function malformedReply(): KeychainUnavailableError {
  return new KeychainUnavailableError('the keychain helper process gave an unexpected answer');
}

function timeoutOf(opts: KeychainOptions | undefined, fallback: number): number {
  const t = opts?.timeoutMs;
  return typeof t === 'number' && Number.isFinite(t) && t > 0 ? t : fallback;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
