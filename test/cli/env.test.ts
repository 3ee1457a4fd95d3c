/**
 * `gateway env`: shell lines for `eval`, pointing OpenAI SDKs at the gateway; `--new-key` creates a
 * key and exports it. The base URL comes from the running gateway's server.json, else from settings.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashLocalKey } from '../../core/keys/local-key.ts';
import { Store } from '../../core/storage/index.ts';
import { runCli, tempHome, CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';

let home: string;
let cleanup: () => void;
beforeAll(() => {
  ({ home, cleanup } = tempHome());
});
afterAll(() => cleanup?.());

const cli = (...args: string[]) => runCli(args, { home });

describe('gateway env', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('--new-key mytool prints both exports and creates the key', async () => {
    const r = await cli('env', '--new-key', 'mytool');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    // No gateway running: the default address from settings.
    expect(lines[0]).toBe("export OPENAI_BASE_URL='http://127.0.0.1:4141/v1'");
    const m = /^export OPENAI_API_KEY='(sk-gw-[A-Za-z0-9]{32,})'$/.exec(lines[1]);
    expect(m).not.toBeNull();
    const store = Store.open(home);
    try {
      const key = store.keys.findByHash(hashLocalKey(m![1]));
      expect(key).toMatchObject({ name: 'mytool', state: 'active' });
    } finally {
      store.close();
    }
  });

  it('uses the running gateway\'s base URL from server.json, and without --new-key prints one line', async () => {
    // A live pid (this test process) makes the state count as running.
    writeFileSync(
      path.join(home, 'server.json'),
      JSON.stringify({ url: 'http://127.0.0.1:50123', baseUrl: 'http://127.0.0.1:50123/v1', pid: process.pid, startedAt: new Date().toISOString() }),
    );
    const r = await cli('env');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("export OPENAI_BASE_URL='http://127.0.0.1:50123/v1'\n");
  });
});
