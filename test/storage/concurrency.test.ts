/**
 * The CLI and the server are separate processes on one SQLite file. These tests run real child
 * processes (Node strips the TypeScript types itself) so the locking is the real thing.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listCalls } from '../../core/storage/audit-queries.ts';
import type { CallRow } from '../../core/storage/audit-writer.ts';
import { Store } from '../../core/storage/index.ts';

const STORE_URL = pathToFileURL(path.resolve(import.meta.dirname, '../../core/storage/index.ts')).href;

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'gw-concurrency-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs an ES module body in a fresh Node process with `Store`, `home` and `makeRow` in scope. */
function runChild(body: string, env: Record<string, string> = {}): Promise<ChildResult> {
  const code = `
    const { Store } = await import(${JSON.stringify(STORE_URL)});
    const home = process.env.GW_HOME;
    let seq = 0;
    const makeRow = (prefix, extra = {}) => ({
      id: prefix + '_' + (seq++), time: Date.now(), keyId: null, keyName: null, endpoint: '/v1/chat/completions',
      modelRequested: 'm', model: 'm', provider: 'p', status: 200, errorType: null, errorMessage: null, stream: false,
      inputTokens: 1, outputTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0.001,
      pricing: 'priced', priceVersion: null, latencyMs: 1, ttftMs: null, attempts: 1, attemptsJson: '[]',
      requestBody: null, responseBody: null, ...extra,
    });
    ${body}
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '--no-warnings', '-e', code], {
      env: { ...process.env, GW_HOME: home, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function callRow(id: string): CallRow {
  return {
    id, time: Date.now(), keyId: null, keyName: null, endpoint: '/v1/models', modelRequested: null, model: null,
    provider: null, status: 200, errorType: null, errorMessage: null, stream: false, inputTokens: 0, outputTokens: 0,
    cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: null, pricing: 'unpriced', priceVersion: null,
    latencyMs: 1, ttftMs: null, attempts: 0, attemptsJson: '[]', requestBody: null, responseBody: null,
  };
}

describe('two connections to one file', () => {
  it('a "CLI" and a "server" see each other\'s changes', () => {
    const server = Store.open(home, { audit: { flushIntervalMs: 60_000 } });
    const cli = Store.open(home);
    const v0 = server.configVersion();

    const { secret } = cli.keys.create({ name: 'new-tool' });
    expect(server.configVersion()).toBe(v0 + 1);
    expect(server.keys.findByName('new-tool')?.state).toBe('active');
    cli.keys.setState('new-tool', 'disabled');
    expect(server.configVersion()).toBe(v0 + 2);
    expect(server.keys.list()[0].state).toBe('disabled');
    cli.providers.add({ name: 'p', type: 'demo', preset: null, baseUrl: 'http://127.0.0.1:1', models: ['demo-chat'], priority: 100, keyEnv: null, keySource: 'none', options: {} });
    expect(server.providers.allServedModels().get('p')).toEqual(['demo-chat']);

    server.audit.record(callRow('req_shared'));
    expect(listCalls(cli.db, { limit: 10 })).toHaveLength(0);
    server.audit.flush();
    expect(listCalls(cli.db, { limit: 10 }).map((c) => c.id)).toEqual(['req_shared']);
    expect(secret).toMatch(/^sk-gw-/);

    cli.close();
    server.close();
  });

  it('concurrent writers in separate processes never fail with SQLITE_BUSY', async () => {
    const workers = 4;
    const keysEach = 25;
    const rowsEach = 20;
    const go = path.join(home, 'go');
    Store.open(home).close(); // migrate once up front; concurrent first opens are covered below
    const body = `
      const { existsSync } = await import('node:fs');
      const errors = [];
      const store = Store.open(home, { audit: { flushIntervalMs: 5, onError: (e) => errors.push(String(e)) } });
      const w = process.env.GW_WORKER;
      // Start together, so the writes really overlap.
      while (!existsSync(process.env.GW_GO)) await new Promise((r) => setTimeout(r, 2));
      for (let i = 0; i < ${keysEach}; i++) {
        const name = 'w' + w + '-k' + i;
        store.keys.create({ name, budgetUsd: 1 });
        for (let j = 0; j < ${rowsEach}; j++) store.audit.record(makeRow('req_' + w + '_' + i));
        if (i % 2 === 0) store.audit.flush();
        store.keys.setState(name, 'disabled');
        store.prices.set('model-' + w + '-' + i, { inputPerMtok: 1, outputPerMtok: 2 });
        await new Promise((r) => setImmediate(r)); // let the writer's timer interleave
      }
      store.close();
      console.log(JSON.stringify({ errors }));
    `;
    const server = Store.open(home);
    const children = Array.from({ length: workers }, (_, w) => runChild(body, { GW_WORKER: String(w), GW_GO: go }));
    // The "server" polls the config version meanwhile, as it would every 250 ms.
    const seen: number[] = [];
    const poll = setInterval(() => seen.push(server.configVersion()), 2);
    await new Promise((r) => setTimeout(r, 300)); // let every child reach the barrier
    writeFileSync(go, '');
    const results = await Promise.all(children);
    clearInterval(poll);

    for (const r of results) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout.trim())).toEqual({ errors: [] });
    }
    expect(server.keys.list()).toHaveLength(workers * keysEach);
    expect(server.keys.list().every((k) => k.state === 'disabled')).toBe(true);
    expect(server.prices.list()).toHaveLength(workers * keysEach);
    expect(listCalls(server.db, { limit: 100_000 })).toHaveLength(workers * keysEach * rowsEach);
    expect(server.configVersion()).toBe(workers * keysEach * 3);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    server.close();
  });

  it('processes opening a fresh file at the same time all migrate it safely', async () => {
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, w) =>
        runChild(`const s = Store.open(home); s.keys.create({ name: 'first-' + ${w} }); s.close(); console.log('ok');`),
      ),
    );
    for (const r of results) {
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe('ok');
    }
    const store = Store.open(home);
    expect(store.keys.list()).toHaveLength(4);
    store.close();
  });

  it('a crash loses at most the last flush window', async () => {
    const result = await runChild(`
      const store = Store.open(home, { audit: { flushIntervalMs: 200 } });
      for (let i = 0; i < 10; i++) store.audit.record(makeRow('req_early'));
      await new Promise((r) => setTimeout(r, 500)); // more than one interval: these must be on disk
      for (let i = 0; i < 5; i++) store.audit.record(makeRow('req_late'));
      process.kill(process.pid, 'SIGKILL');
    `);
    expect(result.signal).toBe('SIGKILL');
    const store = Store.open(home);
    const ids = listCalls(store.db, { limit: 100 }).map((c) => c.id);
    expect(ids).toHaveLength(10);
    expect(ids.every((id) => id.startsWith('req_early'))).toBe(true);
    store.close();
  });
});
