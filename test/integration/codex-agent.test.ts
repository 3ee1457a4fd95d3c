/**
 * The real Codex CLI (`codex exec`, pinned in test/agents/package.json) through the gateway, headless:
 * a temp CODEX_HOME whose model provider points at the gateway with `wire_api = "responses"`, no sandbox
 * and no approvals so it runs unattended, nothing beyond loopback. Against a fake OpenAI Responses
 * upstream (native pass-through) and a chat-only upstream (bridge), Codex completes a prompt with one
 * tool-call round trip: the model calls `exec_command`, Codex runs it and sends `function_call_output`,
 * the model answers from it.
 *
 * With RECORD_CODEX_FIXTURES=1 the requests Codex sent are saved as test/fixtures/codex/*.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startOpenAIResponsesUpstream } from '../fakes/openai-responses-upstream.ts';
import type { ResponsesBody } from '../fakes/openai-responses-upstream.ts';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.ts';
import { startGeminiUpstream } from '../fakes/gemini-upstream.ts';
import { auditRow } from '../support/call-checks.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { dbOf } from '../support/sqlite-db.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const codexBin = path.join(root, 'test/agents/node_modules/.bin/codex');

function installAgents(): string | null {
  const r = spawnSync('bash', [path.join(root, 'scripts/install-agents.sh')], { encoding: 'utf8', timeout: 240_000, env: { ...process.env, PATH: `${path.join(root, 'node_modules/.bin')}:${process.env.PATH}` } });
  if (r.status === 0 && existsSync(codexBin)) return null;
  return `scripts/install-agents.sh failed (${r.status ?? r.signal}): ${(r.stderr ?? '').slice(-400)}`;
}

const installError = installAgents();
if (installError && process.env.CI) throw new Error(installError);
if (installError) console.warn(`[codex agent test] skipped: ${installError}`);

const COMMAND = 'cat note.txt';
const NOTE = 'the secret word is pelican';

const hasToolOutput = (body: ResponsesBody): boolean =>
  Array.isArray(body.input) && (body.input as Array<{ type?: string }>).some((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');

function toolOutputText(body: unknown): string {
  const items = ((body as ResponsesBody).input ?? []) as Array<{ type?: string; output?: unknown }>;
  const out = items.find((i) => i.type === 'function_call_output')?.output;
  return typeof out === 'string' ? out : JSON.stringify(out ?? '');
}

let native: FakeUpstream;
let chat: FakeUpstream;
let anthropic: FakeUpstream;
let gemini: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  if (installError) return;
  native = await startOpenAIResponsesUpstream({ models: ['gpt-5-codex'] }, (body) => {
    if (hasToolOutput(body)) return { text: `The note says: ${toolOutputText(body).includes(NOTE) ? NOTE : 'nothing I could read'}` };
    return { call: { name: 'exec_command', kind: 'function', payload: JSON.stringify({ cmd: COMMAND }) } };
  });
  chat = await startOpenAIUpstream({ models: ['deepseek-chat'], toolCall: { name: 'exec_command', arguments: { cmd: COMMAND } } });
  anthropic = await startAnthropicUpstream({ models: ['claude-sonnet-4-5'], toolCall: { name: 'exec_command', arguments: { cmd: COMMAND } } });
  gemini = await startGeminiUpstream({ models: ['gemini-3-pro-preview'], toolCall: { name: 'exec_command', arguments: { cmd: COMMAND } } });
  t = await startTestGateway({
    providers: [
      { name: 'an', type: 'anthropic', baseUrl: anthropic.url, secret: 'test-ant-codex-0123456789', models: ['claude-sonnet-4-5'] },
      { name: 'oa', type: 'openai', baseUrl: native.url, secret: 'sk-native-codex-0123456789', models: ['gpt-5-codex'] },
      { name: 'ds', type: 'openai-compatible', baseUrl: chat.url, secret: 'sk-chat-codex-0123456789', models: ['deepseek-chat'] },
      { name: 'ge', type: 'gemini', baseUrl: gemini.url, secret: 'test-gem-codex-0123456789', models: ['gemini-3-pro-preview'] },
    ],
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await native?.close();
  await chat?.close();
  await anthropic?.close();
  await gemini?.close();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function runCodex(model: string): Promise<Run> {
  const home = mkdtempSync(path.join(tmpdir(), 'codex-home-'));
  const work = mkdtempSync(path.join(tmpdir(), 'codex-work-'));
  writeFileSync(path.join(work, 'note.txt'), `${NOTE}\n`);
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "gateway"',
      '[model_providers.gateway]',
      'name = "Local gateway"',
      `base_url = "${t.baseUrl}"`,
      'env_key = "GATEWAY_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  const env: Record<string, string> = {
    PATH: `${path.join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
    HOME: home,
    CODEX_HOME: home,
    GATEWAY_API_KEY: t.key,
    NO_COLOR: '1',
  };
  try {
    return await new Promise<Run>((resolve, reject) => {
      const child = spawn(codexBin, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', work, 'What does note.txt say? Run a command to read it.'], {
        cwd: work,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

function record(name: string, bodies: unknown[]): void {
  if (!process.env.RECORD_CODEX_FIXTURES) return;
  const dir = path.join(root, 'test/fixtures/codex');
  mkdirSync(dir, { recursive: true });
  bodies.forEach((b, i) => writeFileSync(path.join(dir, `${name}-${i + 1}.json`), `${JSON.stringify(b, null, 2)}\n`));
}

describe.skipIf(installError !== null)('codex exec through the gateway', () => {
  it('native Responses upstream: one exec_command round trip', async () => {
    const before = native.requests.length;
    const run = await runCodex('gpt-5-codex');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`The note says: ${NOTE}`);
    const sent = native.requests.slice(before).filter((r) => r.path.startsWith('/v1/responses'));
    expect(sent.length).toBeGreaterThanOrEqual(2);
    const last = sent.at(-1)!.body as ResponsesBody;
    expect(last).toMatchObject({ model: 'gpt-5-codex', stream: true, store: false });
    // Codex ran the command and sent its output back.
    expect(toolOutputText(last)).toContain(NOTE);
    record('native', sent.map((r) => r.body));
    t.flush();
    const rows = dbOf(t.gw).prepare("SELECT id FROM calls WHERE endpoint = '/v1/responses' AND provider = 'oa'").all() as Array<{ id: string }>;
    const row = await auditRow(t, rows.at(-1)?.id);
    expect(row.status).toBe(200);
    expect(row.inputTokens).toBeGreaterThan(0);
  }, 150_000);

  it('chat-only upstream (bridged): one exec_command round trip', async () => {
    const before = chat.requests.length;
    const run = await runCodex('deepseek-chat');
    expect(run.code, run.stderr).toBe(0);
    const sent = chat.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
    expect(sent.length).toBeGreaterThanOrEqual(2);
    const messages = (sent.at(-1)!.body as { messages: Array<{ role: string; content: unknown; tool_calls?: unknown[] }> }).messages;
    const assistant = messages.find((m) => m.role === 'assistant' && m.tool_calls);
    expect(assistant?.tool_calls).toHaveLength(1);
    const tool = messages.find((m) => m.role === 'tool');
    expect(String(tool?.content)).toContain(NOTE);
    // The chat fake answers "Tool said: <the tool output>", which Codex prints as its answer.
    expect(run.stdout).toContain('Tool said:');
    expect(run.stdout).toContain(NOTE);
  }, 150_000);

  it('Anthropic upstream (bridged): one exec_command round trip', async () => {
    const before = anthropic.requests.length;
    const run = await runCodex('claude-sonnet-4-5');
    expect(run.code, run.stderr).toBe(0);
    const sent = anthropic.requests.slice(before).filter((r) => r.path.startsWith('/v1/messages'));
    expect(sent.length).toBeGreaterThanOrEqual(2);
    const messages = (sent.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; content?: unknown }>) : []));
    expect(blocks.some((b) => b.type === 'tool_use')).toBe(true);
    const result = blocks.find((b) => b.type === 'tool_result');
    expect(JSON.stringify(result?.content)).toContain(NOTE);
    expect(run.stdout).toContain('Tool said:');
    expect(run.stdout).toContain(NOTE);
  }, 150_000);

  it('Gemini 3 upstream (bridged): the thought signature comes back through Codex, so Gemini accepts the tool output turn', async () => {
    const before = gemini.requests.length;
    const run = await runCodex('gemini-3-pro-preview');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Tool said:');
    expect(run.stdout).toContain(NOTE);
    const turn2 = gemini.requests.slice(before).find((q) => JSON.stringify(q.body).includes('"functionResponse"'));
    const contents = (turn2?.body as { contents: Array<{ parts: Array<Record<string, unknown>> }> }).contents;
    const call = contents.flatMap((c) => c.parts).find((p) => p.functionCall);
    expect(String(call?.thoughtSignature)).not.toBe('skip_thought_signature_validator');
    expect(String(call?.thoughtSignature).length).toBeGreaterThan(100);
  }, 150_000);
});
