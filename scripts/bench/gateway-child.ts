/**
 * Runs OUR gateway in its own process for the benchmark: `startGateway` on a prepared data home (its
 * settings.json, providers, key and prices were written through `Store` by scripts/bench/gateway.ts),
 * exactly as `gateway start` would, minus the terminal UI. Provider secrets come from an env var.
 *
 * `node gateway-child.ts --home DIR --port N`. SIGTERM (or the parent's stdin closing) stops it
 * gracefully, which flushes the audit log. Lines on stdin drive the V8 CPU profiler, so a profile
 * covers exactly the measured window: `profile-start`, then `profile-stop FILE` (answers
 * `PROFILE-SAVED FILE`).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// BENCH_GATEWAY_ROOT runs the gateway from another copy of the sources (before/after comparisons).
type AppModule = typeof import('../../core/gateway/app.ts');
const root = process.env.BENCH_GATEWAY_ROOT;
const { startGateway } = (root
  ? await import(pathToFileURL(path.join(path.resolve(root), 'core', 'gateway', 'app.ts')).href)
  : await import('../../core/gateway/app.ts')) as AppModule;

const argOf = (name: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1 || !process.argv[i + 1]) throw new Error(`--${name} is required`);
  return process.argv[i + 1];
};

const gw = await startGateway({
  home: argOf('home'),
  port: Number(argOf('port')),
  host: '127.0.0.1',
  skipDiscovery: true,
  secretStore: async () => null,
});
process.stdout.write(`READY ${gw.port}\n`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 5_000).unref();
  gw.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error('close failed:', err);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);

let session: Session | null = null;
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d: string) => {
  pending += d;
  for (let i = pending.indexOf('\n'); i !== -1; i = pending.indexOf('\n')) {
    const line = pending.slice(0, i).trim();
    pending = pending.slice(i + 1);
    void command(line).catch((err: unknown) => process.stdout.write(`PROFILE-ERROR ${String(err)}\n`));
  }
});

async function command(line: string): Promise<void> {
  if (line === 'profile-start') {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 500 });
    await session.post('Profiler.start');
    process.stdout.write('PROFILE-STARTED\n');
  } else if (line.startsWith('profile-stop ') && session) {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    session = null;
    const file = line.slice('profile-stop '.length);
    writeFileSync(file, JSON.stringify(profile));
    process.stdout.write(`PROFILE-SAVED ${file}\n`);
  }
}
