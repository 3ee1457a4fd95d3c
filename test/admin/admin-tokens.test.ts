/** Admin tokens per person on the SQLite store (the same contract runs on PostgreSQL in test/team). */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../core/gateway/app.ts';
import { Store } from '../../core/storage/index.ts';
import { adminTokensContract } from '../support/admin-tokens-contract.ts';
import { CLI_TEST_TIMEOUT_MS, tempHome } from '../support/cli.ts';

describe('admin tokens per person (SQLite)', () => {
  const { home, cleanup } = tempHome('gw-admin-tokens-');
  let gw: RunningGateway;

  beforeAll(async () => {
    gw = await startGateway({ home, port: 0, skipDiscovery: true });
  });
  afterAll(async () => {
    await gw?.close();
    cleanup();
  });

  it(
    'are shown once, stored hashed, honoured, named in admin actions and revocable',
    async () => {
      await adminTokensContract({
        flags: [],
        cliHome: home,
        gateways: [gw],
        storedRows: async () => {
          const store = Store.open(home);
          try {
            return store.db.prepare('SELECT * FROM admin_tokens').all() as Array<Record<string, unknown>>;
          } finally {
            store.close();
          }
        },
      });
    },
    CLI_TEST_TIMEOUT_MS * 3,
  );
});
