/**
 * Daily and monthly budgets start at midnight in the process's time zone, so a team's instances must share one.
 * The first instance names it in Redis; one started in another zone warns, naming both and the fix.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTeamState } from '../../core/storage/team/team-state.ts';
import { createDatabase, startPostgres, startRedis, teamServersInstalled, teamServersRequired, type RunningServer } from './servers.ts';

const run = teamServersInstalled() || teamServersRequired();

describe.skipIf(!run)('a team instance in another time zone', () => {
  let pg: RunningServer;
  let redis: RunningServer;
  let database: string;
  beforeAll(async () => {
    [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
    database = await createDatabase(pg.url, 'gateway_tz');
  }, 120_000);
  afterAll(async () => {
    await pg?.stop();
    await redis?.stop();
  });

  it('is warned, naming both zones; one in the team\'s zone is not', async () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const first = await openTeamState({ database, redis: redis.url }, { server: true });
      await first.state.close();
      expect(errors).not.toHaveBeenCalled();
      const r = new Redis(redis.url);
      await r.set('gw:time-zone', 'Antarctica/Troll');
      r.disconnect();
      const second = await openTeamState({ database, redis: redis.url }, { server: true });
      await second.state.close();
      expect(errors.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(new RegExp(`time zone ${zone.replace('/', '\\/')}.*Antarctica/Troll.*TZ=Antarctica/Troll`));
    } finally {
      errors.mockRestore();
    }
  }, 60_000);
});
