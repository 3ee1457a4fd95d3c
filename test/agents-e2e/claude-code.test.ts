/**
 * The real Claude Code (`@anthropic-ai/claude-code`, pinned in test/agents/package.json) run headless
 * through the gateway: `claude -p` with `ANTHROPIC_BASE_URL` at the gateway's root and a gateway key in
 * `ANTHROPIC_AUTH_TOKEN`, against a fake Anthropic upstream and a fake OpenAI upstream. Each fake scripts
 * one Bash tool call; Claude Code runs it, sends the tool_result, and prints the model's final answer.
 * Telemetry, auto-update and all non-essential traffic are off and HOME is a temp folder, so it never
 * reaches the internet. The agent is installed on demand (scripts/install-agents.sh); without network and
 * without CI the test skips, saying why.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { REPO_ROOT } from '../support/cli.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { dbOf } from '../support/sqlite-db.ts';

const CLAUDE = path.join(REPO_ROOT, 'test', 'agents', 'node_modules', '.bin', 'claude');
const MARKER = 'gateway-roundtrip-42';
const BASH_CALL = { name: 'Bash', arguments: { command: `echo ${MARKER}`, description: 'Print the marker' } };

let installError: string | null = null;

/** Skips a test when Claude Code could not be installed here; in CI that is a failure. */
function needClaude(ctx: TestContext): void {
  if (!installError) return;
  if (process.env.CI) throw new Error(installError);
  ctx.skip(`Claude Code is not installed and could not be (${installError})`);
}
let t: TestGateway;
let anthropic: FakeUpstream;
let openai: FakeUpstream;
let gemini: FakeUpstream;
let home: string;

beforeAll(async () => {
  if (!existsSync(CLAUDE)) {
    const r = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', 'install-agents.sh')], { encoding: 'utf8', timeout: 280_000 });
    if (r.status !== 0 || !existsSync(CLAUDE)) installError = `scripts/install-agents.sh failed (${r.status}): ${(r.stderr || r.error?.message || '').slice(-400)}`;
  }
  anthropic = await startAnthropicUpstream({ models: ['claude-sonnet-4-6'], toolCall: BASH_CALL });
  openai = await startOpenAIUpstream({ models: ['gpt-4o-mini'], toolCall: BASH_CALL });
  gemini = await startGeminiUpstream({ models: ['gemini-3-pro-preview'], toolCall: BASH_CALL });
  t = await startTestGateway({
    providers: [
      { name: 'claude', type: 'anthropic', baseUrl: anthropic.url, models: ['claude-sonnet-4-6'], secret: 'anthropic-upstream-secret' },
      { name: 'oai', type: 'openai', baseUrl: openai.url, models: ['gpt-4o-mini'], secret: 'openai-upstream-secret' },
      { name: 'gem', type: 'gemini', baseUrl: gemini.url, models: ['gemini-3-pro-preview'], secret: 'gemini-upstream-secret' },
    ],
    keys: [{ name: 'claude-code' }],
  });
  home = mkdtempSync(path.join(tmpdir(), 'gw-claude-home-'));
}, 300_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([anthropic?.close(), openai?.close(), gemini?.close()]);
  if (home) rmSync(home, { recursive: true, force: true });
});

function runClaude(model: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    ANTHROPIC_BASE_URL: t.baseUrl.replace(/\/v1$/, ''),
    ANTHROPIC_AUTH_TOKEN: t.key,
    // Every alias and background task on the model under test; nothing leaves the machine.
    ANTHROPIC_MODEL: model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
  };
  return new Promise((resolve) => {
    const p = spawn(CLAUDE, ['-p', 'Run the marker command with Bash and tell me what it printed.', '--model', model, '--allowedTools', 'Bash', '--permission-mode', 'acceptEdits', '--output-format', 'text'], { env, cwd: home });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdin.end();
    const timer = setTimeout(() => p.kill('SIGKILL'), 90_000);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const toolResultTurn = (fake: FakeUpstream, find: (body: Record<string, unknown>) => boolean) => fake.requests.find((r) => r.method === 'POST' && find(r.body as Record<string, unknown>));

describe('Claude Code through the gateway', () => {
  it('against an Anthropic upstream: the tool round trip completes, bodies and betas pass through', async (ctx) => {
    needClaude(ctx);
    const before = anthropic.requests.length;
    const r = await runClaude('claude-sonnet-4-6');
    expect(r.stderr).toBe('');
    expect(r.code, JSON.stringify(r)).toBe(0);
    expect(r.stdout).toContain(`Tool said: ${MARKER}`);
    const mine = anthropic.requests.slice(before);
    const first = mine[0];
    expect(first.path).toBe('/v1/messages');
    expect(String(first.headers['anthropic-beta'])).toContain('claude-code-20250219');
    expect(first.headers['x-api-key']).toBe('anthropic-upstream-secret');
    // The tool_result went up as Claude Code wrote it, cache_control included.
    const turn2 = toolResultTurn(anthropic, (b) => JSON.stringify(b.messages).includes('"tool_result"'));
    expect(JSON.stringify(turn2?.body)).toContain(MARKER);
    t.flush();
    const rows = dbOf(t.gw).prepare("SELECT status, user_agent, session_id, provider FROM calls WHERE endpoint = '/v1/messages' AND provider = 'claude'").all() as Array<{ status: number; user_agent: string; session_id: string | null }>;
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.every((x) => x.status === 200 && /claude-cli/.test(x.user_agent) && typeof x.session_id === 'string')).toBe(true);
  }, 200_000);

  it('against an OpenAI upstream: translated both ways, the tool round trip completes', async (ctx) => {
    needClaude(ctx);
    const before = openai.requests.length;
    const r = await runClaude('gpt-4o-mini');
    // It warns that it does not know this model's context window; nothing else.
    expect(r.stderr).not.toMatch(/API Error|issue with the selected model/i);
    expect(r.code, JSON.stringify(r)).toBe(0);
    expect(r.stdout).toContain(`Tool said: ${MARKER}`);
    const mine = openai.requests.slice(before);
    expect(mine.every((q) => q.path === '/v1/chat/completions')).toBe(true);
    const turn2 = mine.find((q) => JSON.stringify((q.body as { messages: unknown[] }).messages).includes('"role":"tool"'));
    const tool = (turn2?.body as { messages: Array<{ role: string; content: unknown }> }).messages.find((m) => m.role === 'tool');
    expect(String(tool?.content)).toContain(MARKER);
    // Claude Code's own headers stay behind; OpenAI gets its key and nothing Anthropic-specific.
    expect(mine[0].headers['anthropic-beta']).toBeUndefined();
    expect(mine[0].headers.authorization).toBe('Bearer openai-upstream-secret');
  }, 200_000);

  it('against a Gemini 3 upstream: the thought signature survives the round trip (Gemini refuses the tool_result turn without it)', async (ctx) => {
    needClaude(ctx);
    const before = gemini.requests.length;
    const r = await runClaude('gemini-3-pro-preview');
    expect(r.stderr).not.toMatch(/API Error|issue with the selected model/i);
    expect(r.code, JSON.stringify(r)).toBe(0);
    expect(r.stdout).toContain(`Tool said: ${MARKER}`);
    const mine = gemini.requests.slice(before);
    const turn2 = mine.find((q) => JSON.stringify(q.body).includes('"functionResponse"'));
    const contents = (turn2?.body as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> }).contents;
    const call = contents.flatMap((c) => c.parts).find((p) => p.functionCall);
    expect(String(call?.thoughtSignature)).not.toBe('skip_thought_signature_validator');
    expect(String(call?.thoughtSignature).length).toBeGreaterThan(100);
  }, 200_000);
});
