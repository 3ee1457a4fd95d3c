/**
 * Where a team's state lives: a PostgreSQL URL and a Redis URL, from flags, the environment
 * (`GATEWAY_DATABASE_URL`, `GATEWAY_REDIS_URL`) or settings.json (`database`, `redis`), first found
 * wins per value. Both or neither: PostgreSQL alone could not share budgets and limits atomically.
 */
export interface TeamUrls {
  database: string;
  redis: string;
}

export class TeamConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TeamConfigError';
  }
}

export function teamUrls(given: Partial<TeamUrls>, env: NodeJS.ProcessEnv = process.env): TeamUrls | null {
  const database = given.database || env.GATEWAY_DATABASE_URL || undefined;
  const redis = given.redis || env.GATEWAY_REDIS_URL || undefined;
  if (database === undefined && redis === undefined) return null;
  if (database === undefined || redis === undefined) {
    throw new TeamConfigError(
      `team mode needs both a PostgreSQL and a Redis URL: ${database === undefined ? '--database (or GATEWAY_DATABASE_URL)' : '--redis (or GATEWAY_REDIS_URL)'} is missing.`,
    );
  }
  if (!/^postgres(ql)?:\/\//.test(database)) throw new TeamConfigError(`--database must be a postgres:// URL, got "${redact(database)}"`);
  if (!/^rediss?:\/\//.test(redis)) throw new TeamConfigError(`--redis must be a redis:// or rediss:// URL, got "${redact(redis)}"`);
  return { database, redis };
}

/** A URL without its password, for messages and logs. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}
