/**
 * `gateway run -- node script.mjs`: the script's OpenAI and Anthropic SDKs find the gateway through the
 * variables the run sets, the calls are billed to the run's own key, the spend is printed at exit, the
 * script's exit code is passed through, and the key is refused afterwards. `gateway env --for` prints each
 * tool's settings.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../core/gateway/app.ts';
import { hashLocalKey } from '../../core/keys/local-key.ts';
import { DEMO_MODELS } from '../../core/demo/demo-upstream.ts';
import { Store } from '../../core/storage/index.ts';
import { REPO_ROOT, runCli, startCli, tempHome, CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';

let home: string;
let cleanup: () => void;
let work: string;

beforeAll(() => {
  ({ home, cleanup } = tempHome());
  work = mkdtempSync(path.join(tmpdir(), 'gw-run-'));
  const store = Store.open(home);
  try {
    store.providers.add({ name: 'demo', type: 'demo', preset: null, baseUrl: 'http://127.0.0.1/demo-built-in', models: [...DEMO_MODELS], priority: 100, keyEnv: null, keySource: 'none', options: {} });
    store.keys.create({ name: 'parent', budgetUsd: 5, rpm: 100, models: ['demo-chat'] });
  } finally {
    store.close();
  }
});
afterAll(() => {
  cleanup?.();
  rmSync(work, { recursive: true, force: true });
});

const SCRIPT = `
import { writeFileSync } from 'node:fs';
import OpenAI from ${JSON.stringify(path.join(REPO_ROOT, 'node_modules/openai/index.mjs'))};
import Anthropic from ${JSON.stringify(path.join(REPO_ROOT, 'node_modules/@anthropic-ai/sdk/index.mjs'))};
writeFileSync(process.argv[2], JSON.stringify({ key: process.env.OPENAI_API_KEY, env: {
  OPENAI_BASE_URL: process.env.OPENAI_BASE_URL, ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL,
  same: process.env.OPENAI_API_KEY === process.env.ANTHROPIC_AUTH_TOKEN, anthropicApiKey: process.env.ANTHROPIC_API_KEY ?? null } }));
const openai = new OpenAI({ maxRetries: 0 });
const chat = await openai.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'hello from the run' }] });
console.log('openai:', chat.choices[0].message.content);
try {
  const anthropic = new Anthropic({ maxRetries: 0 });
  const msg = await anthropic.messages.create({ model: 'demo-chat', max_tokens: 50, messages: [{ role: 'user', content: 'hi anthropic' }] });
  console.log('anthropic: ok', msg.content.map((b) => b.text ?? '').join(''));
} catch (err) {
  console.log('anthropic: error', err.status ?? err.message);
}
process.exit(7);
`;

describe('gateway run', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('runs the command with its own key, bills it, prints the spend, passes the exit code, then deletes the key', async () => {
    const script = path.join(work, 'script.mjs');
    const seen = path.join(work, 'seen.json');
    writeFileSync(script, SCRIPT);
    const r = await runCli(['run', '--budget', '2', '--', process.execPath, script, seen], { home, env: { ANTHROPIC_API_KEY: 'placeholder-anthropic-key-must-not-reach-the-command' }, timeoutMs: 80_000 });
    expect(r.code, r.stderr).toBe(7);
    expect(r.stdout).toContain('openai: Demo reply to: hello from the run');
    expect(r.stdout).toContain('anthropic: ok Demo reply to: hi anthropic');
    const { key, env } = JSON.parse(readFileSync(seen, 'utf8')) as { key: string; env: Record<string, unknown> };
    expect(key).toMatch(/^sk-gw-/);
    expect(env.OPENAI_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(env.ANTHROPIC_BASE_URL).toBe(String(env.OPENAI_BASE_URL).replace(/\/v1$/, ''));
    expect(env.same).toBe(true);
    expect(env.anthropicApiKey).toBeNull();
    // The spend line names the calls, tokens and cost, and the deleted key.
    const m = /gateway run: (\d+) calls?, (\d+) input \+ (\d+) output tokens, \$([0-9.]+).*key "(run-node-[^"]+)" deleted/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(1);
    expect(Number(m![4])).toBeGreaterThan(0);

    const store = Store.open(home);
    let keyId: string;
    try {
      const k = store.keys.findByHash(hashLocalKey(key));
      expect(k).toMatchObject({ name: m![5], state: 'deleted', budgetUsd: 2 });
      keyId = k!.id;
      const calls = store.db.prepare('SELECT endpoint, status, cost_usd FROM calls WHERE key_id = ?').all(keyId) as Array<{ endpoint: string; status: number; cost_usd: number }>;
      expect(calls.some((c) => c.endpoint === '/v1/chat/completions' && c.status === 200 && c.cost_usd > 0)).toBe(true);
      expect(calls.some((c) => c.endpoint === '/v1/messages' && c.status === 200 && c.cost_usd > 0)).toBe(true);
    } finally {
      store.close();
    }

    // Afterwards the key is refused.
    const gw = await startGateway({ home, port: 0, host: '127.0.0.1' });
    try {
      const res = await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(401);
    } finally {
      await gw.close();
    }
  });

  it('--key NAME gives the run that key\'s limits; an unknown NAME fails', async () => {
    const script = path.join(work, 'ok.mjs');
    writeFileSync(script, 'process.exit(0);\n');
    const r = await runCli(['run', '--key', 'parent', '--', process.execPath, script], { home, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/key "parent-run-node-[^"]+" deleted/);
    const store = Store.open(home);
    try {
      const run = store.keys.list({ includeDeleted: true }).find((k) => k.name.startsWith('parent-run-'));
      expect(run).toMatchObject({ rpm: 100, models: ['demo-chat'], budgetPeriod: 'total', state: 'deleted' });
      expect(run!.budgetUsd).toBeGreaterThan(0);
      expect(run!.budgetUsd).toBeLessThanOrEqual(5);
    } finally {
      store.close();
    }
    const bad = await runCli(['run', '--key', 'nobody', '--', process.execPath, script], { home });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/No key named "nobody"/);
    const both = await runCli(['run', '--key', 'parent', '--budget', '1', '--', process.execPath, script], { home });
    expect(both.code).toBe(2);
  });
});

describe('gateway run signals', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('passes SIGTERM to the command and exits with its code', async () => {
    const script = path.join(work, 'wait.mjs');
    writeFileSync(script, "process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(42); }); console.log('ready'); setInterval(() => {}, 1000);\n");
    const cli = startCli(['run', '--', process.execPath, script], { home });
    await cli.waitFor(/ready/);
    cli.child.kill('SIGTERM');
    const { code } = await cli.exited;
    expect(cli.stdout).toContain('got SIGTERM');
    expect(code).toBe(42);
    expect(cli.stderr).toMatch(/gateway run: 0 calls.*deleted/);
  });
});

describe('gateway env --for', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('codex: the config.toml provider block with wire_api = "responses"', async () => {
    const r = await runCli(['env', '--for', 'codex', '--new-key', 'codex'], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[model_providers.gateway]');
    expect(r.stdout).toContain('base_url = "http://127.0.0.1:4141/v1"');
    expect(r.stdout).toContain('wire_api = "responses"');
    expect(r.stdout).toContain('env_key = "GATEWAY_API_KEY"');
    expect(r.stdout).toMatch(/^export GATEWAY_API_KEY='sk-gw-[A-Za-z0-9]+'$/m);
  });

  it('claude-code: ANTHROPIC_BASE_URL at the root and ANTHROPIC_AUTH_TOKEN', async () => {
    const r = await runCli(['env', '--for', 'claude-code', '--json'], { home });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tool: 'claude-code', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4141' } });
    // Without --new-key, no placeholder value: the key variable is named as still needed.
    expect(JSON.parse(r.stdout).env.ANTHROPIC_AUTH_TOKEN).toBeUndefined();
    expect(JSON.parse(r.stdout).key_needed).toEqual({ variables: ['ANTHROPIC_AUTH_TOKEN'], how: 'gateway env --for claude-code --new-key NAME' });
    const plain = await runCli(['env', '--for', 'openai'], { home });
    expect(plain.stdout).toContain("export OPENAI_BASE_URL='http://127.0.0.1:4141/v1'");
    expect(plain.stdout).toMatch(/^# export OPENAI_API_KEY=/m);
    const bad = await runCli(['env', '--for', 'vim'], { home });
    expect(bad.code).toBe(2);
  });

  it('names a served model where the tool\'s own default (a Claude model, Codex\'s) is not served here', async () => {
    // This home serves the demo's models only: no Claude model, no Codex one.
    const claude = JSON.parse((await runCli(['env', '--for', 'claude-code', '--json'], { home })).stdout) as { env: Record<string, string>; notes: string[] };
    expect(claude.env.ANTHROPIC_MODEL).toBe('demo-chat');
    expect(claude.env.ANTHROPIC_DEFAULT_HAIKU_MODEL).toBe('demo-chat');
    expect(claude.notes.join(' ')).toContain('demo-chat');
    const codex = await runCli(['env', '--for', 'codex'], { home });
    expect(codex.stdout).toContain('model = "demo-chat"');
    expect(codex.stdout).toMatch(/^# Models served here: demo-chat/m);
  });
});
