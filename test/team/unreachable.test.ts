import { describe, expect, it } from 'vitest';
import { isPgConnectionFailure, unreachableServer } from '../../core/storage/team/unreachable.ts';

const urls = { database: 'postgres://gw:s3cret@db.internal:5432/gateway', redis: 'redis://:pw@cache:6380' };
const err = (message: string, extra: Record<string, unknown> = {}, name = 'Error') => Object.assign(new Error(message), { name }, extra);

describe('which team server an error says is away', () => {
  it('names Redis for ioredis giving up, and PostgreSQL for its shutdown and connection codes, passwords hidden', () => {
    expect(unreachableServer(err('Reached the max retries per request limit', {}, 'MaxRetriesPerRequestError'), urls)).toBe('Redis at redis://:***@cache:6380');
    expect(unreachableServer(err('Connection is closed.'), urls)).toMatch(/^Redis/);
    expect(unreachableServer(err('the database system is shutting down', { code: '57P03' }), urls)).toBe('PostgreSQL at postgres://gw:***@db.internal:5432/gateway');
    expect(unreachableServer(err('terminating connection due to administrator command', { code: '57P01' }), urls)).toMatch(/^PostgreSQL/);
    expect(unreachableServer(err('Connection terminated unexpectedly'), urls)).toMatch(/^PostgreSQL/);
  });

  it('tells the two apart by port for a plain network error', () => {
    expect(unreachableServer(err('connect ECONNREFUSED', { code: 'ECONNREFUSED', port: 6380 }), urls)).toMatch(/^Redis/);
    expect(unreachableServer(err('connect ECONNREFUSED', { code: 'ECONNREFUSED', port: 5432 }), urls)).toMatch(/^PostgreSQL/);
  });

  it('leaves every other error alone: a refused statement is not an outage', () => {
    expect(unreachableServer(err('duplicate key value violates unique constraint', { code: '23505' }), urls)).toBeNull();
    expect(unreachableServer(err('syntax error', { code: '42601' }), urls)).toBeNull();
    expect(unreachableServer('nope', urls)).toBeNull();
    expect(isPgConnectionFailure(err('value too long', { code: '22001' }))).toBe(false);
    expect(isPgConnectionFailure(err('connect ECONNREFUSED', { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isPgConnectionFailure(err('x', { code: '08006' }))).toBe(true);
  });
});
