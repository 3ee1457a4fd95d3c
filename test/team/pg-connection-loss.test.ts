/**
 * A PostgreSQL connection the server ends while the gateway holds it between two statements (a restart, an
 * administrator's pg_terminate_backend): the transaction fails, the process does not. Without a listener on
 * the checked-out client, pg's `error` event was an uncaught exception that ended the gateway.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction, openPool } from '../../core/storage/team/pg-pool.ts';
import { pgBinDir, startPostgres, teamServersRequired, type RunningServer } from './servers.ts';

const run = pgBinDir() !== null || teamServersRequired();

describe.skipIf(!run)('a team connection ended by the server', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('fails the transaction under way, and the pool serves the next one', async () => {
    const pool = openPool(server.url, 2);
    const killer = new pg.Client({ connectionString: server.url });
    await killer.connect();
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const attempt = inTransaction(pool, async (c) => {
        const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        // Between two statements, as the audit writer is while it builds its next INSERT.
        await killer.query('SELECT pg_terminate_backend($1)', [pid]);
        await new Promise((r) => setTimeout(r, 300));
        await c.query('SELECT 1');
      });
      await expect(attempt).rejects.toThrow();
      expect(uncaught).toEqual([]);
      const after = await inTransaction(pool, async (c) => (await c.query<{ one: number }>('SELECT 1 AS one')).rows[0].one);
      expect(after).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
      await killer.end();
      await pool.end();
    }
  }, 30_000);
});
