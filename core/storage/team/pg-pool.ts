/**
 * The PostgreSQL connection pool of team mode. BIGINT columns (unix ms, token counts) come back as JS
 * numbers, as SQLite gives them, so the row mappings of the SQLite repositories serve both stores.
 */
import pg from 'pg';

// int8 → number: every BIGINT here is a time in ms or a count, far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type { Pool, PoolClient } from 'pg';

export function openPool(url: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000 });
  // An idle client losing its connection (a database restart) must not crash the gateway.
  pool.on('error', (err) => process.emitWarning(`PostgreSQL connection error: ${err.message}`));
  return pool;
}

/**
 * Runs `fn` with a client of its own, released after (destroyed when its connection died). While a client is
 * checked out the pool does not listen for its errors, and a connection the server ends between two statements
 * (a restart: "terminating connection due to administrator command") makes pg emit `error` on the client, which
 * with nobody listening ended the whole process. Here the statement under way, or the next, fails instead.
 */
export async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (err: Error): void => {
    lost = err;
  };
  client.on('error', onError);
  try {
    return await fn(client);
  } finally {
    client.removeListener('error', onError);
    client.release(lost);
  }
}

/** Runs `fn` in one transaction on one client. */
export function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query('BEGIN');
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}
