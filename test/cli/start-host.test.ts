/**
 * `gateway start` warns on stderr when it listens beyond loopback (`--host 0.0.0.0`, or a non-loopback
 * "host" in settings.json), and stays quiet on loopback. Each gateway runs as a child process on a free
 * port (`--port 0`) and is killed as soon as the line in question has appeared.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'gw-start-host-'));
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

let homes = 0;
function freshHome(settings?: object): string {
  const home = path.join(scratch, `home-${++homes}`);
  mkdirSync(home, { mode: 0o700 });
  if (settings) writeFileSync(path.join(home, 'settings.json'), JSON.stringify(settings));
  return home;
}

/**
 * Starts `gateway start --no-tui ARGS`, waits until stderr matches `until`, kills the gateway and
 * returns everything it printed.
 */
async function startUntil(args: string[], home: string, until: RegExp): Promise<{ stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_HOME: home };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [BIN, 'start', '--no-tui', '--port', '0', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${until} within 15 s; stderr: ${stderr}`)), 15_000);
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString('utf8');
        if (until.test(stderr)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`gateway exited (${code}) before ${until}; stderr: ${stderr}`));
      });
    });
  } finally {
    child.kill('SIGKILL');
    await exited;
    children.delete(child);
  }
  return { stdout, stderr };
}

const WARNING = /Warning: listening on (\S+?),? not loopback/;

describe('gateway start --host', () => {
  it('warns on stderr when listening on 0.0.0.0', async () => {
    const { stdout, stderr } = await startUntil(['--host', '0.0.0.0'], freshHome(), WARNING);
    expect(WARNING.exec(stderr)?.[1]).toBe('0.0.0.0');
    expect(stderr).toMatch(/other machines can reach the gateway/);
    expect(stderr).toMatch(/allowedHosts/);
    expect(stdout).not.toMatch(/Warning/);
  });

  it('warns when settings.json makes it listen on 0.0.0.0 without --host', async () => {
    const { stderr } = await startUntil([], freshHome({ host: '0.0.0.0' }), WARNING);
    expect(WARNING.exec(stderr)?.[1]).toBe('0.0.0.0');
  });

  it.each([[[]], [['--host', '127.0.0.1']], [['--host', 'localhost']]])('does not warn on loopback (%j)', async (args) => {
    const { stderr } = await startUntil(args, freshHome(), /gateway listening on http:\/\/\S+\/v1/);
    expect(stderr).toMatch(/gateway listening on http:\/\/(127\.0\.0\.1|\[::1\]):\d+\/v1/);
    expect(stderr).not.toMatch(/Warning/);
  });
});
