/**
 * Opens the shared state a gateway runs on, with the counters that go with it: SQLite and memory on
 * one machine (the default), or PostgreSQL plus Redis when `database` and `redis` are set (team mode).
 * The team implementation is imported only when asked for, so a laptop never loads `pg` or `ioredis`.
 */
import { BudgetTracker } from '../gateway/budget.ts';
import { RateLimiter } from '../routing/rate-limiter.ts';
import type { Clock } from '../routing/clock.ts';
import type { AuditWriterOptions } from '../storage/audit-writer.ts';
import { Store } from '../storage/index.ts';
import type { OpenedState } from './gateway-state.ts';
import { teamUrls, type TeamUrls } from './team-urls.ts';

export type { OpenedState } from './gateway-state.ts';

export interface OpenStateOptions {
  home: string;
  /** PostgreSQL and Redis URLs; both or neither (see `teamUrls`). */
  team?: Partial<TeamUrls>;
  /** The server writes audit rows off its request thread; the CLI writes none. */
  server?: boolean;
  audit?: AuditWriterOptions;
  clock?: Clock;
}

export async function openGatewayState(opts: OpenStateOptions): Promise<OpenedState> {
  const team = teamUrls(opts.team ?? {});
  if (team) {
    const { openTeamState } = await import('../storage/team/team-state.ts');
    return openTeamState(team, { server: opts.server ?? false, clock: opts.clock, audit: opts.audit });
  }
  const store = Store.open(opts.home, { auditThread: opts.server ?? false, audit: opts.audit });
  return {
    state: store,
    // Spend is read synchronously from SQLite once per key and period, then kept in memory.
    budgets: new BudgetTracker((keyId, since) => store.calls.spendForKey(keyId, since)),
    limiter: new RateLimiter({ clock: opts.clock }),
  };
}
