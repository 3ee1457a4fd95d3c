/**
 * The README's first command, run as written (minus its `npm ci &&`, which the checkout has already done) by
 * a shell whose PATH has only the system's Node: the gateway answers, and it is the only process left
 * running, on the pinned Node (no `npm exec`, no older Node waiting for it), with the server's malloc settings.
 * `node bin/gateway.js start` (what npx and a global install run) gets those settings by re-running itself in place.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { treePids } from '../../scripts/bench/process-tree.ts';
import { REPO_ROOT, startCli, tempHome } from '../support/cli.ts';
import type { RunningCli } from '../support/cli.ts';
import { shellOver } from './shell.ts';
import type { Shell } from './shell.ts';

const shells: Shell[] = [];
const running: RunningCli[] = [];
const homes: string[] = [];
afterAll(async () => {
  for (const s of shells) await s.stop();
  for (const r of running) await r.stop('SIGKILL');
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** The first line of the sh block under "## The two commands", without its comment. */
function readmeStartCommand(): string {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The two commands'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README has no sh block under "## The two commands"');
  return block
    .split('\n')[0]
    .replace(/\s+#.*$/, '')
    .trim();
}

describe("the README's start command", { timeout: 120_000 }, () => {
  it('leaves one process running, the gateway on the pinned Node, and it answers', async (ctx) => {
    if (process.platform !== 'linux') ctx.skip('reads the process tree from /proc');
    const command = readmeStartCommand();
    expect(command).toMatch(/^npm ci && /);
    const line = command.replace(/^npm ci && /, '');
    expect(line).toMatch(/\bstart\b.*--demo/);

    const home = mkdtempSync(path.join(tmpdir(), 'gw-readme-start-'));
    homes.push(home);
    // The README's command listens on the default port; a test must not depend on 4141 being free.
    writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ port: 0 }));
    // A user's shell: the system's Node (if any) on PATH, not the checkout's node_modules/.bin.
    const env: NodeJS.ProcessEnv = { PATH: ['/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter), HOME: home, GATEWAY_HOME: home, NO_COLOR: '1' };
    // As typed into a terminal: the shell runs the line; nothing here `exec`s it on the line's behalf.
    const child = spawn('bash', ['-c', `${line}\nstatus=$?; exit $status`], { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const shell = wrap(child, line);
    shells.push(shell);
    const baseUrl = (await shell.waitFor(/gateway listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/, 'stderr'))[1];
    const key = (await shell.waitFor(/^(sk-gw-[A-Za-z0-9]{32,})$/m))[1];

    const res = await fetch(`${baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const models = (await res.json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toContain('demo-chat');

    // The shell itself (the user's terminal) aside, what runs is one process: the gateway.
    const below = treePids(child.pid as number).slice(1);
    const described = below.map((p) => `${p}: ${readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
    expect(below, described.join('\n')).toHaveLength(1);
    const exe = realpathSync(readlinkSync(`/proc/${below[0]}/exe`));
    expect(exe).toBe(realpathSync(path.join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node')));
    expect(readFileSync(`/proc/${below[0]}/cmdline`, 'utf8').split('\0')).toContain(path.join(REPO_ROOT, 'bin', 'gateway.js'));
    // The launcher gave it the server's malloc settings.
    expect(environ(below[0])).toContain('MALLOC_ARENA_MAX=2');

    expect((await shell.stop()).code).toBe(0);
  });
});

describe('gateway start run by node on bin/gateway.js (npx, a global install)', { timeout: 120_000 }, () => {
  it('re-runs itself in place with the malloc settings: same pid, no other process', async (ctx) => {
    if (process.platform !== 'linux') ctx.skip('reads the process tree from /proc');
    const h = tempHome();
    homes.push(h.home);
    const gw = startCli(['start', '--demo', '--no-tui', '--port', '0'], { home: h.home, env: { MALLOC_ARENA_MAX: undefined } });
    running.push(gw);
    await gw.waitFor(/gateway listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/, 'stderr');
    const pid = gw.child.pid as number;
    expect(environ(pid)).toContain('MALLOC_ARENA_MAX=2');
    expect(treePids(pid)).toEqual([pid]);
    await gw.stop('SIGINT');
  });

  it('keeps a value the user set', async (ctx) => {
    if (process.platform !== 'linux') ctx.skip('reads the process environment from /proc');
    const h = tempHome();
    homes.push(h.home);
    const gw = startCli(['start', '--demo', '--no-tui', '--port', '0'], { home: h.home, env: { MALLOC_ARENA_MAX: '4' } });
    running.push(gw);
    await gw.waitFor(/gateway listening on/, 'stderr');
    expect(environ(gw.child.pid as number)).toContain('MALLOC_ARENA_MAX=4');
    await gw.stop('SIGINT');
  });
});

function environ(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
}

/** shell.ts's interface over a shell that runs the line as a terminal does (startShell `exec`s it, which would hide a launcher that does not). */
function wrap(child: ReturnType<typeof spawn>, line: string): Shell {
  // Ctrl-C in a terminal signals the foreground process group: here, the gateway below the shell.
  return shellOver(child, line, () => {
    for (const p of treePids(child.pid as number).slice(1)) process.kill(p, 'SIGINT');
  });
}
