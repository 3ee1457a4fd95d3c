/**
 * Admin tokens per person on a team's state: real PostgreSQL and Redis, two gateway instances. The
 * contract of test/support/admin-tokens-contract.ts: created once through the CLI, honoured by both,
 * actions named after the person, a revocation refused by both at once, only hashes in PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../core/gateway/app.ts';
import { adminTokensContract } from '../support/admin-tokens-contract.ts';
import { CLI_TEST_TIMEOUT_MS } from '../support/cli.ts';
import { createDatabase, startPostgres, startRedis, teamServersInstalled, teamServersRequired, type RunningServer } from './servers.ts';

const run = teamServersInstalled() || teamServersRequired();

describe.skipIf(!run)('admin tokens per person (PostgreSQL + Redis, two instances)', () => {
  let pgServer: RunningServer;
  let redisServer: RunningServer;
  let database: string;
  const gws: RunningGateway[] = [];
  const homes: string[] = [];
  const home = () => {
    const h = mkdtempSync(path.join(tmpdir(), 'gw-team-admin-'));
    homes.push(h);
    return h;
  };

  beforeAll(async () => {
    [pgServer, redisServer] = await Promise.all([startPostgres(), startRedis()]);
    database = await createDatabase(pgServer.url, 'gateway_admin_tokens');
    for (let i = 0; i < 2; i++) gws.push(await startGateway({ home: home(), port: 0, database, redis: redisServer.url, skipDiscovery: true }));
  }, 120_000);

  afterAll(async () => {
    for (const g of gws) await g.close().catch(() => undefined);
    await pgServer?.stop();
    await redisServer?.stop();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  }, 60_000);

  it(
    'are shown once, stored hashed, honoured by every instance, named in admin actions and revocable',
    async () => {
      await adminTokensContract({
        flags: ['--database', database, '--redis', redisServer.url],
        cliHome: home(),
        gateways: gws,
        storedRows: async () => {
          const c = new pg.Client({ connectionString: database });
          await c.connect();
          try {
            return (await c.query<Record<string, unknown>>('SELECT * FROM admin_tokens')).rows;
          } finally {
            await c.end();
          }
        },
      });
    },
    CLI_TEST_TIMEOUT_MS * 3,
  );
});
