/**
 * A change made through the admin API and who made it: a person's admin token name (or `admin-token`
 * for the data home's file), never the token itself. `gateway start --no-tui` prints one line per action.
 */
export interface AdminAction {
  time: number;
  holder: string;
  method: string;
  path: string;
  status: number;
}

/** `2026-01-02T03:04:05.000Z admin alice POST /admin/keys 201` */
export const adminActionLine = (a: AdminAction): string => `${new Date(a.time).toISOString()} admin ${a.holder} ${a.method} ${a.path} ${a.status}`;
