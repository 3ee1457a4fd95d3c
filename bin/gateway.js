#!/usr/bin/env node
// The `gateway` (and `gateway-local`) entry point. Plain JavaScript so it runs on any Node and can refuse an
// old one with advice that fits where it runs, before a native module (better-sqlite3 13 crashes outright
// on Node 20) is loaded.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { constants } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freshStartBundle } from './start-bundle.js';

/**
 * glibc's malloc settings for the long-running server, read by the C library when a process starts (the
 * `./gateway` launcher exports the same). With one malloc arena per thread (the default allows 8 per core), the
 * native memory of a load (sockets, HTTP parsers, buffers) stays scattered over arenas that are never given
 * back. A value the user set wins.
 */
const SERVER_MALLOC_ENV = { MALLOC_ARENA_MAX: '2' };

// First of all, before any signal is caught: re-running in place resets the handlers, and a stop signal
// caught by this image would be lost to the next one.
if (process.argv[2] === 'start') runWithServerMemorySettings();

// `gateway start`: from the first line, a stop signal is remembered instead of killing the process (the
// CLI takes a while to load); cli/stop-signals.ts takes these over (same Symbol.for slot).
if (process.argv[2] === 'start') {
  const early = { received: 0, handler: () => early.received++, signals: ['SIGINT', 'SIGTERM', 'SIGHUP'] };
  for (const sig of early.signals) process.on(sig, early.handler);
  globalThis[Symbol.for('gateway.earlyStopSignals')] = early;
}

// undici 8 needs 22.19; the checkout's TypeScript sources need type stripping (unflagged since 22.18).
const MIN = [22, 19];
const source = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
/** An installed package runs its bundle (dist/start/, ~75 modules to load instead of ~350), else tsc's dist/cli/. */
function packageEntry() {
  const bundled = fileURLToPath(new URL('../dist/start/main.js', import.meta.url));
  return existsSync(bundled) ? bundled : fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
}
// A checkout has the sources; an installed package ships dist/ only (Node refuses to strip types under node_modules).
const inCheckout = existsSync(source) && !/[\\/]node_modules[\\/]/.test(source);

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < MIN[0] || (major === MIN[0] && minor < MIN[1])) {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (inCheckout && existsSync(pinned) && !process.env.GATEWAY_NO_REEXEC) {
    // `npm install -g .` from a checkout links this file, and the shell runs it on the system Node: run it
    // again on the checkout's pinned Node (`npm ci` installed it), with the same arguments and stdio.
    const child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, GATEWAY_NO_REEXEC: '1' },
    });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
    child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  } else {
    const need = `${MIN[0]}.${MIN[1]}`;
    const advice = inCheckout
      ? 'Inside the checkout, `npm ci` installs the pinned Node 24; then `./gateway ...` uses it (or `npx gateway ...`).\n'
      : `Install Node.js ${need} or newer (https://nodejs.org, or nvm/fnm/volta), or run this very package with a newer Node from npm:\n` +
        // The installed folder, not the package name: it works whether or not the name is on the registry.
        `  npx -p node@24 -p ${JSON.stringify(fileURLToPath(new URL('..', import.meta.url)).replace(/[\\/]$/, ''))} gateway start\n`;
    process.stderr.write(`gateway needs Node.js ${need} or newer; this is Node ${process.versions.node}.\n${advice}`);
    process.exit(1);
  }
} else {
  // In the checkout: the start bundle when it was built from these very sources (`GATEWAY_FROM_SOURCES=1`
  // skips it), else the TypeScript sources.
  const root = fileURLToPath(new URL('..', import.meta.url));
  const entry = inCheckout ? ((!process.env.GATEWAY_FROM_SOURCES && freshStartBundle(root)) || source) : packageEntry();
  if (!existsSync(entry)) {
    process.stderr.write(`gateway: ${entry} is missing: this copy of the package has no compiled JavaScript. Run \`npm run build\` in it, or reinstall it.\n`);
    process.exit(1);
  }
  enableCompileCache();
  const { main } = await import(pathToFileURL(entry).href);
  await main(process.argv);
}

/**
 * Node's on-disk compile cache keeps V8's code cache and, for the checkout's TypeScript, the type-stripped
 * source: a start then neither strips types nor loads the stripper (measured: 60% less CPU to import the
 * server, 30 MiB less RSS). Set through the environment too, so the audit worker thread uses it as well.
 * Default folder: `node-compile-cache` in the OS temp dir (`NODE_COMPILE_CACHE` picks another; `NODE_DISABLE_COMPILE_CACHE=1` turns it off).
 */
function enableCompileCache() {
  if (typeof module.enableCompileCache !== 'function' || process.env.NODE_DISABLE_COMPILE_CACHE) return;
  try {
    const r = module.enableCompileCache(process.env.NODE_COMPILE_CACHE || undefined);
    if (r.directory) process.env.NODE_COMPILE_CACHE = r.directory;
  } catch {
    /* a cache is an optimisation: never a reason not to start */
  }
}

/** Re-runs this process in place (same pid, nothing left behind) when the environment lacks those settings. */
function runWithServerMemorySettings() {
  const missing = Object.keys(SERVER_MALLOC_ENV).filter((k) => process.env[k] === undefined);
  // process.execve: Node >= 22.15 / 23.11, POSIX only; elsewhere the gateway runs with the C library's defaults.
  if (missing.length === 0 || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { ...SERVER_MALLOC_ENV, ...process.env });
  } catch {
    /* not replaced: run as we are */
  }
}
