/** The SQLite connection under a gateway started on a data home (tests read the audit table directly). */
import type { RunningGateway } from '../../core/gateway/app.ts';
import { Store, type Database } from '../../core/storage/index.ts';

export function dbOf(gw: RunningGateway): Database {
  const state = gw.deps.store;
  if (!(state instanceof Store)) throw new Error(`this gateway's state is ${state.kind}, not SQLite`);
  return state.db;
}
