/**
 * A crash loses at most the audit flush window. A real `gateway start --demo` child process serves a
 * steady stream of requests; we note when each response completed, SIGKILL the child mid-traffic,
 * reopen its SQLite file and check that every call completed more than 250 ms (the 200 ms flush
 * interval plus a margin) before the kill is in the audit table, and that few calls were lost.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor, waitForBaseUrl } from '../support/cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FLUSH_WINDOW_MS = 250;

let child: ChildProcess | null = null;
let home: string | null = null;

afterAll(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('audit log across a SIGKILL', () => {
  it('keeps every call that completed more than the flush window before the kill', async () => {
    home = mkdtempSync(path.join(tmpdir(), 'gw-crash-'));
    const proc = spawn(process.execPath, [path.join(ROOT, 'bin/gateway.js'), 'start', '--demo', '--no-tui', '--port', '0'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_HOME: home, GATEWAY_DEMO_DELAY_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? code)));

    const key = await waitFor('the demo key on stdout', () => /^(sk-gw-[A-Za-z0-9]+)$/m.exec(stdout)?.[1]).catch((err: Error) => {
      throw new Error(`${err.message}; stderr: ${stderr}`);
    });
    const baseUrl = await waitForBaseUrl(home);
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(baseUrl).not.toMatch(/:0\/v1$/);

    // Traffic: a few workers in a loop until the kill; each success notes its id and completion time.
    const completed: Array<{ id: string; at: number }> = [];
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const stream = i % 3 === 0;
          const res = await fetch(`${baseUrl}/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'demo-chat', stream, messages: [{ role: 'user', content: `worker ${w} call ${i}` }] }),
          });
          const text = await res.text();
          if (res.status !== 200) throw new Error(`status ${res.status}: ${text}`);
          if (stream && !text.includes('data: [DONE]')) throw new Error('stream cut');
          completed.push({ id: res.headers.get('x-request-id')!, at: Date.now() });
        } catch {
          if (stop) return;
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await waitFor('traffic', () => (completed.length >= 40 ? true : null), 40_000);
    // Keep the traffic going a little longer than one flush window, then kill it mid-flight.
    await new Promise((r) => setTimeout(r, 600));
    const killAt = Date.now();
    proc.kill('SIGKILL');
    stop = true;
    expect(await exited).toBe('SIGKILL');
    await Promise.all(workers);

    const db = new Database(path.join(home, 'gateway.db'), { readonly: false });
    let stored: Set<string>;
    try {
      stored = new Set((db.prepare('SELECT id FROM calls').all() as Array<{ id: string }>).map((r) => r.id));
    } finally {
      db.close();
    }

    const old = completed.filter((c) => c.at < killAt - FLUSH_WINDOW_MS);
    const recent = completed.filter((c) => c.at >= killAt - FLUSH_WINDOW_MS);
    const missingOld = old.filter((c) => !stored.has(c.id));
    const lost = completed.filter((c) => !stored.has(c.id));
    expect(old.length).toBeGreaterThan(20);
    expect(missingOld.map((c) => `${c.id} completed ${killAt - c.at} ms before the kill`)).toEqual([]);
    // What was lost all completed within the window, so it is at most the window's traffic: a small
    // share of the whole run.
    expect(lost.length).toBeLessThanOrEqual(recent.length);
    expect(lost.length).toBeLessThan(completed.length / 2);
  }, 90_000);
});
