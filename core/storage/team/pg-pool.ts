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

/** Runs `fn` in one transaction on one client. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
