/**
 * `gateway start` stopped by SIGTERM in its first moments exits 0 and leaves no lock or server.json:
 * a loop of start + kill at the earliest moment the process can catch a signal (the entry point's first
 * line catches SIGHUP too, which Node alone never does: its bit in /proc/PID/status's SigCgt says that
 * line has run), then while the CLI loads, while the database opens, and once it listens. Before that
 * line no JavaScript has run, and the signal's default action is all any program could get.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
// The real binary (node_modules/.bin/node may be a launcher that catches signals itself).
const node = process.execPath;
const SIGHUP_BIT = 1n; // signal 1

function entryPointRan(pid: number): boolean {
  try {
    const line = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line !== null && (BigInt(`0x${line[1]}`) & SIGHUP_BIT) !== 0n;
  } catch {
    return false;
  }
}

type When = { kind: 'earliest' } | { kind: 'after'; ms: number } | { kind: 'listening' };

async function startAndKill(when: When): Promise<{ code: number | null; signal: NodeJS.Signals | null; home: string; stderr: string; caughtBeforeListening: boolean }> {
  const home = mkdtempSync(path.join(tmpdir(), 'gw-sigterm-'));
  const child = spawn(node, [path.join(root, 'bin/gateway.js'), 'start', '--no-tui', '--port', '0', '--demo'], { env: { ...process.env, GATEWAY_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdout.resume();
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  const pid = child.pid ?? 0;
  for (let i = 0; i < 5000 && !entryPointRan(pid); i++) await new Promise((r) => setTimeout(r, 2));
  // Signals must be caught long before the server is up (without the early catch, only then are they).
  const caughtBeforeListening = entryPointRan(pid) && !stderr.includes('listening on');
  if (when.kind === 'after') await new Promise((r) => setTimeout(r, when.ms));
  if (when.kind === 'listening') for (let i = 0; i < 1500 && !stderr.includes('listening on'); i++) await new Promise((r) => setTimeout(r, 10));
  child.kill('SIGTERM');
  const [code, signal] = await exited;
  return { code, signal, home, stderr, caughtBeforeListening };
}

describe.skipIf(process.platform !== 'linux')('SIGTERM during the first moments of gateway start', () => {
  it('exits 0 and leaves no lock or server.json, whenever the signal arrives', { timeout: 180_000 }, async () => {
    const moments: When[] = [{ kind: 'earliest' }, { kind: 'earliest' }, { kind: 'after', ms: 50 }, { kind: 'after', ms: 200 }, { kind: 'after', ms: 500 }, { kind: 'after', ms: 1000 }, { kind: 'listening' }];
    for (const when of moments) {
      const r = await startAndKill(when);
      try {
        expect({ when, code: r.code, signal: r.signal, early: r.caughtBeforeListening }, r.stderr.slice(-500)).toEqual({ when, code: 0, signal: null, early: true });
        expect(existsSync(path.join(r.home, 'gateway.lock'))).toBe(false);
        expect(existsSync(path.join(r.home, 'server.json'))).toBe(false);
      } finally {
        rmSync(r.home, { recursive: true, force: true });
      }
    }
  });
});
