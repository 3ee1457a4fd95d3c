/**
 * Nothing lost on a graceful stop. A real `gateway start --demo` child process runs 20 streams of
 * several seconds; SIGTERM arrives while they run. With the default grace every stream finishes with
 * `[DONE]` and has its audit row; with a short grace the ones still running end with an error event
 * and still have their row (status 503), the store being closed only after them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, waitForBaseUrl } from '../support/cli.ts';
import type { RunningCli } from '../support/cli.ts';

let cli: RunningCli | null = null;
let home: string | null = null;
afterEach(async () => {
  await cli?.stop('SIGKILL');
  cli = null;
  if (home) rmSync(home, { recursive: true, force: true });
  home = null;
});

interface StreamResult {
  id: string;
  text: string;
}

/** Starts `n` streams and resolves once every one has its headers; each promise ends with the whole body. */
async function openStreams(baseUrl: string, key: string, n: number): Promise<Array<Promise<StreamResult>>> {
  // Each resolves once its headers are in, with the body still coming (boxed: a bare promise would flatten).
  const started: Array<Promise<{ body: Promise<StreamResult> }>> = [];
  for (let i = 0; i < n; i++) {
    started.push(
      fetch(`${baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        // ~12 words at 300 ms a word: a stream of about 3.5 s.
        body: JSON.stringify({ model: 'demo-chat', stream: true, messages: [{ role: 'user', content: `stream ${i} please tell me a short story now` }] }),
      }).then((res) => {
        expect(res.status).toBe(200);
        const id = res.headers.get('x-request-id')!;
        const body = res.text().then(
          (text): StreamResult => ({ id, text }),
          (err: Error): StreamResult => ({ id, text: `<read failed: ${err.message}>` }),
        );
        return { body };
      }),
    );
  }
  return (await Promise.all(started)).map((s) => s.body);
}

async function startGateway(settings: Record<string, unknown>): Promise<{ baseUrl: string; key: string }> {
  home = mkdtempSync(path.join(tmpdir(), 'gw-stop-'));
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify(settings));
  cli = startCli(['start', '--demo', '--no-tui', '--port', '0'], { home, env: { GATEWAY_DEMO_DELAY_MS: '300' } });
  const key = (await cli.waitFor(/^(sk-gw-[A-Za-z0-9]+)$/m, 'stdout', 60_000))[1];
  const baseUrl = await waitForBaseUrl(home, 60_000);
  return { baseUrl, key };
}

function rows(ids: string[]): Map<string, { status: number; pricing: string; cost_usd: number | null; output_tokens: number }> {
  const db = new Database(path.join(home!, 'gateway.db'), { readonly: true });
  try {
    const out = new Map<string, { status: number; pricing: string; cost_usd: number | null; output_tokens: number }>();
    const stmt = db.prepare(`SELECT status, pricing, cost_usd, output_tokens FROM calls WHERE id = ?`);
    for (const id of ids) {
      const r = stmt.get(id) as { status: number; pricing: string; cost_usd: number | null; output_tokens: number } | undefined;
      if (r) out.set(id, r);
    }
    return out;
  } finally {
    db.close();
  }
}

describe('SIGTERM during 20 streams', () => {
  it('drains them: every stream ends with [DONE] and has its audit row', async () => {
    const { baseUrl, key } = await startGateway({});
    const streams = await openStreams(baseUrl, key, 20);
    const exit = cli!.stop('SIGTERM');
    const results = await Promise.all(streams);
    const { code } = await exit;
    // The streams were still running when the signal came (each takes about 3.5 s).
    expect(results.every((r) => r.text.split('\n\n').length > 5)).toBe(true);
    expect(code).toBe(0);
    for (const r of results) expect(r.text.trimEnd().endsWith('data: [DONE]'), `stream ${r.id}: ${r.text.slice(-200)}`).toBe(true);
    const found = rows(results.map((r) => r.id));
    expect(found.size).toBe(20);
    for (const row of found.values()) {
      expect(row.status).toBe(200);
      expect(row.cost_usd).toBeGreaterThan(0);
    }
  }, 120_000);

  it('with a short grace, the streams still running end with an error event and still have their row', async () => {
    const { baseUrl, key } = await startGateway({ shutdownGraceMs: 500 });
    const streams = await openStreams(baseUrl, key, 20);
    const exit = cli!.stop('SIGTERM');
    const results = await Promise.all(streams);
    await exit;
    for (const r of results) {
      const last = r.text.trimEnd().split('\n\n').at(-1) ?? '';
      expect(last, r.text.slice(-300)).toMatch(/^data: \{"error":\{"message":"The gateway is shutting down/);
    }
    const found = rows(results.map((r) => r.id));
    expect(found.size).toBe(20);
    for (const row of found.values()) {
      expect(row.status).toBe(503);
      // Billed for what was relayed before the cut.
      expect(row.cost_usd).toBeGreaterThan(0);
    }
  }, 120_000);

  it('a second signal stops at once: the streams are cut with an error event, rows written, exit 1', async () => {
    const { baseUrl, key } = await startGateway({});
    const streams = await openStreams(baseUrl, key, 5);
    cli!.child.kill('SIGTERM');
    await cli!.waitFor(/letting calls in flight finish/, 'stderr', 10_000);
    const t0 = Date.now();
    const { code } = await cli!.stop('SIGTERM');
    const results = await Promise.all(streams);
    expect(code).toBe(1);
    // Well before the streams (about 3.5 s each) or the grace (30 s) would have ended.
    expect(Date.now() - t0).toBeLessThan(3_000);
    for (const r of results) expect(r.text).toMatch(/data: \{"error":\{"message":"The gateway is shutting down/);
    const found = rows(results.map((r) => r.id));
    expect(found.size).toBe(5);
    for (const row of found.values()) expect(row.status).toBe(503);
  }, 120_000);
});
