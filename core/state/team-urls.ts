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
  // Refused here, before any connection: a port that is not one made the Redis client retry for 30 s first.
  if (!URL.canParse(database)) throw new TeamConfigError(`--database is not a valid URL (check the host and port): "${redact(database)}"`);
  if (!URL.canParse(redis)) throw new TeamConfigError(`--redis is not a valid URL (check the host and port): "${redact(redis)}"`);
  const db = new URL(redis).pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new TeamConfigError(`--redis: the path names a database number (redis://host:6379/0), got "/${db}"`);
  return { database, redis };
}

/**
 * A URL without its password (in the user part or a `password` query parameter), for messages and logs. What
 * does not parse as a URL is not shown at all: nothing tells which part of it is a secret.
 */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const name of [...u.searchParams.keys()]) if (/pass/i.test(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    return '(a value that is not a URL)';
  }
}
