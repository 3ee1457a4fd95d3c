/**
 * `npx gateway start`: npm does not pass a SIGTERM on to the gateway, so stopping the pid a script started
 * (npm's) left the gateway running with its port and lock. Under `npm exec` the gateway now stops, cleanly, when
 * its launcher goes. The launcher here is a stand-in for npm: a Node process with npm's `npm_command=exec`
 * that runs the checkout's `gateway` through `sh -c`, as npm does, and is then killed outright.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launcherPid } from '../../cli/launcher-watch.ts';
import { CLI_TEST_TIMEOUT_MS, REPO_ROOT, tempHome, waitFor, waitForBaseUrl } from '../support/cli.ts';

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanups) c();
});

function fakeProc(root: string, pid: number, comm: string, ppid: number): void {
  mkdirSync(path.join(root, String(pid)), { recursive: true });
  writeFileSync(path.join(root, String(pid), 'comm'), `${comm}\n`);
  writeFileSync(path.join(root, String(pid), 'stat'), `${pid} (${comm}) S ${ppid} 1 1 0 -1\n`);
}

describe('the launcher of `npx gateway start`', () => {
  it('is the parent, or the parent of a shell parent', () => {
    const { home: proc, cleanup } = tempHome('gw-proc-');
    cleanups.push(cleanup);
    fakeProc(proc, 200, 'sh', 100);
    fakeProc(proc, 300, 'node', 100);
    fakeProc(proc, 400, 'my sh (x)', 100);
    expect(launcherPid(200, proc)).toBe(100);
    expect(launcherPid(300, proc)).toBe(300);
    expect(launcherPid(400, proc)).toBe(400);
    expect(launcherPid(999, proc)).toBe(999);
  });

  it.runIf(process.platform === 'linux')('going away stops the gateway cleanly, releasing its lock', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const { home, cleanup } = tempHome('gw-npx-');
    cleanups.push(cleanup);
    const script = `require('node:child_process').spawn('sh', ['-c', ${JSON.stringify(`${path.join(REPO_ROOT, 'gateway')} start --demo --no-tui --port 0 > /dev/null 2>&1; true`)}], { stdio: 'ignore' }); setInterval(() => {}, 1000);`;
    const launcher = spawn(process.execPath, ['-e', script], { env: { ...process.env, GATEWAY_HOME: home, npm_command: 'exec' }, stdio: 'ignore' });
    cleanups.push(() => launcher.kill('SIGKILL'));
    const baseUrl = await waitForBaseUrl(home);
    expect((await fetch(`${baseUrl.replace(/\/v1$/, '')}/healthz`)).status).toBe(200);
    expect(existsSync(path.join(home, 'gateway.lock'))).toBe(true);
    launcher.kill('SIGKILL');
    // It notices within its check interval, drains (nothing in flight) and removes its lock and server.json.
    await waitFor('the gateway to stop', () => (!existsSync(path.join(home, 'gateway.lock')) && !existsSync(path.join(home, 'server.json')) ? true : null), 15_000);
    await expect(fetch(`${baseUrl.replace(/\/v1$/, '')}/healthz`)).rejects.toThrow();
  });
});
