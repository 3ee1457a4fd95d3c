/**
 * `gateway logs` and `gateway usage` read the audit trail a running gateway wrote: calls are made
 * through the SDK against a real gateway on the same data home, then the CLI prints them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../fakes/openai-upstream.ts';
import type { FakeUpstream } from '../fakes/fault.ts';
import { startTestGateway } from '../support/gateway-harness.ts';
import type { TestGateway } from '../support/gateway-harness.ts';
import { runCli, CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';

const LOG_FIELDS = [
  'id',
  'time',
  'key',
  'model_requested',
  'model',
  'provider',
  'status',
  'error_type',
  'input_tokens',
  'output_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'cost_usd',
  'pricing',
  'latency_ms',
  'ttft_ms',
  'attempts',
];

type LogJson = Record<string, unknown> & { id: string; status: number; cost_usd: number | null };

let up: FakeUpstream;
let t: TestGateway;
/** x-request-ids in the order the calls were made. */
const ids: string[] = [];
/** `logs --json` as parsed by the first test. */
let logRows: LogJson[] = [];

beforeAll(async () => {
  up = await startOpenAIUpstream({ models: ['gpt-4o-mini'], cachedTokens: 2, reasoningTokens: 1 });
  t = await startTestGateway({ providers: [{ name: 'oa', type: 'openai', baseUrl: up.url, secret: 'sk-logs-upstream-0123456789abcd', models: ['gpt-4o-mini'] }] });
  const client = t.client();
  for (const content of ['first call here', 'second call']) {
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).withResponse();
    ids.push(r.response.headers.get('x-request-id')!);
  }
  const s = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a stream' }] }).withResponse();
  for await (const _ of s.data) void _;
  ids.push(s.response.headers.get('x-request-id')!);
  try {
    await client.chat.completions.create({ model: 'missing-model', messages: [{ role: 'user', content: 'x' }] });
  } catch (err) {
    ids.push((err as { requestID: string }).requestID);
  }
  expect(ids).toHaveLength(4);
  t.flush();
});
afterAll(async () => {
  await t?.close();
  await up?.close();
});

const cli = (...args: string[]) => runCli(args, { home: t.home });

describe('gateway logs', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('--json prints one object per line, newest first, with the documented fields', async () => {
    const r = await cli('logs', '--json');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    const rows = lines.map((l) => JSON.parse(l) as LogJson);
    logRows = rows;
    expect(rows.map((x) => x.id)).toEqual([...ids].reverse());
    for (const row of rows) for (const f of LOG_FIELDS) expect(row, f).toHaveProperty(f);

    const [notFound, stream, second, first] = rows;
    expect(first).toMatchObject({
      key: 'test',
      model_requested: 'gpt-4o-mini',
      model: 'gpt-4o-mini',
      provider: 'oa',
      status: 200,
      error_type: null,
      input_tokens: 8, // 3 words + 3 + 2 cached
      output_tokens: 5, // "Echo: first call here" = 4 words + 1 reasoning
      cached_tokens: 2,
      reasoning_tokens: 1,
      pricing: 'priced',
      attempts: 1,
    });
    expect(first.cost_usd).toBeGreaterThan(0);
    expect(Date.parse(first.time as string)).not.toBeNaN();
    expect(typeof first.latency_ms).toBe('number');
    expect(second).toMatchObject({ status: 200, input_tokens: 7, output_tokens: 4 });
    expect(stream).toMatchObject({ status: 200, provider: 'oa', input_tokens: 7, output_tokens: 4 }); // "a stream": 2 + 3 + 2 cached; "Echo: a stream" 3 + 1
    expect(typeof stream.ttft_ms).toBe('number');
    expect(notFound).toMatchObject({ status: 404, error_type: 'invalid_request_error', model_requested: 'missing-model', provider: null, cost_usd: null, attempts: 0 });
  });

  it('show ID prints the whole call, attempts and bodies included', async () => {
    const human = await cli('logs', 'show', ids[0]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(ids[0]);
    expect(human.stdout).toMatch(/attempt oa\/gpt-4o-mini: 200/);
    expect(human.stdout).toContain('first call here');

    const json = await cli('logs', 'show', ids[0], '--json');
    expect(json.code).toBe(0);
    const d = JSON.parse(json.stdout) as LogJson & { attempt_list: unknown[]; request_body: string; response_body: string };
    expect(d.id).toBe(ids[0]);
    expect(d.attempt_list).toEqual([expect.objectContaining({ provider: 'oa', model: 'gpt-4o-mini', status: 200, error: null })]);
    expect(d.request_body).toContain('first call here');
    expect(d.response_body).toContain('Echo: first call here');
    expect(`${d.request_body}${d.response_body}`).not.toContain('sk-logs-upstream');
  });

  it('show with an unknown id fails with exit 1', async () => {
    const r = await cli('logs', 'show', 'req_does_not_exist');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('req_does_not_exist');
  });
});

describe('gateway usage', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('--json groups by key by default; --by model too', async () => {
    const byKey = await cli('usage', '--json');
    expect(byKey.code).toBe(0);
    const rows = JSON.parse(byKey.stdout) as Array<Record<string, number | string>>;
    expect(rows).toHaveLength(1);
    const logs = logRows;
    expect(logs).toHaveLength(4);
    const totalCost = logs.reduce((s, l) => s + (l.cost_usd ?? 0), 0);
    expect(rows[0]).toMatchObject({ group: 'test', requests: 4, errors: 1, input_tokens: 8 + 7 + 7 + 0, output_tokens: 5 + 4 + 4 + 0 });
    expect(rows[0].cost_usd as number).toBeCloseTo(totalCost, 12);

    const byModel = await cli('usage', '--by', 'model', '--json');
    const models = JSON.parse(byModel.stdout) as Array<{ group: string; requests: number }>;
    expect(models.map((m) => [m.group, m.requests]).sort()).toEqual([
      ['gpt-4o-mini', 3],
      ['missing-model', 1],
    ]);
  });
});
