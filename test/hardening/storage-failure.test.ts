/**
 * Storage failures while the gateway runs: the client gets a 503 in its protocol's envelope naming the
 * database file and what to do (not a 500 "bug of ours", not a 400), with `x-should-retry: false` when
 * only a person can fix it; the log says the same. The full disk is real (SQLite's page limit on the
 * server's connection); the I/O error is better-sqlite3's own error class thrown by the key look-up.
 */
import Anthropic from '@anthropic-ai/sdk';
import BetterSqlite3 from 'better-sqlite3';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dataPaths } from '../../core/home.ts';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.ts';
import { dbOf } from '../support/sqlite-db.ts';

let t: TestGateway;
let dbFile: string;
beforeAll(async () => {
  t = await startTestGateway({ demo: true });
  dbFile = dataPaths(t.home).db;
});
afterAll(async () => {
  await t?.close();
});

describe('runtime storage failures', () => {
  it('a full disk: the admin API answers 503 database_full naming the file, and logs it', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const db = dbOf(t.gw);
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    try {
      let last: { status: number; body: { error: { type: string; code: string; message: string } }; retry: unknown } | null = null;
      for (let i = 0; i < 500; i++) {
        const res = await request(`${t.gw.url}/admin/keys`, {
          method: 'POST',
          headers: { authorization: `Bearer ${t.gw.adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `filler-${i}-${'x'.repeat(50)}` }),
        });
        const body = (await res.body.json()) as { error: { type: string; code: string; message: string } };
        if (res.statusCode !== 201) {
          last = { status: res.statusCode, body, retry: res.headers['x-should-retry'] };
          break;
        }
      }
      expect(last?.status).toBe(503);
      expect(last?.body.error.type).toBe('api_error');
      expect(last?.body.error.code).toBe('database_full');
      expect(last?.body.error.message).toContain(dbFile);
      expect(last?.body.error.message).toMatch(/Free space|purge/);
      expect(last?.retry).toBe('false');
      expect(errors.mock.calls.some((c) => String(c[0]).includes('database_full') && String(c[0]).includes(dbFile))).toBe(true);
    } finally {
      db.pragma('max_page_count = 1073741823');
      errors.mockRestore();
    }
  });

  it('a disk I/O error during a call: 503 database_io in the OpenAI envelope and in the Anthropic one', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const keys = t.gw.deps.store.keys;
    const original = keys.findByHash.bind(keys);
    keys.findByHash = () => {
      throw new BetterSqlite3.SqliteError('disk I/O error', 'SQLITE_IOERR_READ');
    };
    try {
      // A key the gateway has not seen yet is looked up in the database before a 401.
      const unknown = `sk-gw-${'A'.repeat(40)}`;
      const openai = new OpenAI({ apiKey: unknown, baseURL: t.baseUrl, maxRetries: 0 });
      const err = await openai.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] }).then(
        () => null,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err?.status).toBe(503);
      expect(err?.type).toBe('api_error');
      expect(err?.code).toBe('database_io');
      expect(err?.message).toContain(dbFile);
      expect(err?.headers?.get('x-should-retry')).toBe('false');

      await new Promise((r) => setTimeout(r, 30)); // past the look-up's rate limit
      const anthropic = new Anthropic({ apiKey: `sk-gw-${'B'.repeat(40)}`, baseURL: t.gw.url, maxRetries: 0 });
      const aerr = await anthropic.messages.create({ model: 'demo-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).then(
        () => null,
        (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
      );
      expect(aerr).toBeInstanceOf(Anthropic.APIError);
      // Not an overload a retry mends (that would be Anthropic's 529): a 503 api_error naming the file.
      expect(aerr?.status).toBe(503);
      expect(aerr?.headers?.get('x-should-retry')).toBe('false');
      const body = aerr?.error as { type: string; error: { type: string; message: string } };
      expect(body.type).toBe('error');
      expect(body.error.message).toContain(dbFile);
      expect(errors.mock.calls.some((c) => String(c[0]).includes('database_io') && String(c[0]).includes(dbFile))).toBe(true);
    } finally {
      keys.findByHash = original;
      errors.mockRestore();
    }
  });
});
