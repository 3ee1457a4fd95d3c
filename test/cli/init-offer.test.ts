/**
 * The first `gateway start` on a terminal, with no provider yet and provider keys in the environment,
 * offers `gateway init` once. A real terminal comes from `script` (util-linux), which runs the command
 * on a pseudo-terminal; the answer is typed on its stdin.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KNOWN_KEY_VARS } from '../../core/providers/known-env.ts';
import { CLI_TEST_TIMEOUT_MS, GATEWAY_BIN, runCli, tempHome } from '../support/cli.ts';

const hasScript = process.platform === 'linux' && spawnSync('script', ['--version']).status === 0;
const homes: Array<() => void> = [];
afterAll(() => {
  for (const c of homes) c();
});

/** Runs `gateway start` on a pseudo-terminal, answers `answer` to the first question, stops it once it listens. */
function startOnTerminal(home: string, answer: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_HOME: home, NO_COLOR: '1', TERM: 'dumb' };
  for (const k of KNOWN_KEY_VARS) for (const v of k.vars) delete env[v];
  env.OPENAI_API_KEY = 'sk-openai-offer-0123456789';
  env.DBUS_SESSION_BUS_ADDRESS = 'unix:path=/nonexistent/bus';
  delete env.NODE_OPTIONS;
  const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(GATEWAY_BIN)} start --no-tui --port 0`;
  const child = spawn('script', ['-qefc', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let answered = false;
  let stopping = false;
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (!answered && /\[Y\/n\]/.test(out)) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
      const url = /gateway listening on (\S+)/.exec(out)?.[1];
      if (url && !stopping && /Stop with Ctrl-C/.test(out)) {
        stopping = true;
        // One request first: a signal in the very first moment after start is a known, separate race.
        void fetch(`${url}/models`)
          .catch(() => undefined)
          .then(() => child.stdin.write('\x03'));
      }
    });
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

describe.runIf(hasScript)('the first start on a terminal', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('offers init once; "n" changes nothing and the next start does not ask again', async () => {
    const h = tempHome('gw-offer-');
    homes.push(h.cleanup);
    const first = await startOnTerminal(h.home, 'n');
    expect(first).toContain('First run: no provider yet');
    expect(first).toContain('OPENAI_API_KEY');
    expect(first).toContain('Nothing changed.');
    expect(first).toContain('gateway listening on');
    expect(existsSync(path.join(h.home, 'init-offered'))).toBe(true);
    expect((await runCli(['providers', 'list', '--json'], { home: h.home })).stdout.trim()).toBe('[]');

    const second = await startOnTerminal(h.home, 'y');
    expect(second).not.toContain('First run');
    expect(second).toContain('gateway listening on');
  });
});
