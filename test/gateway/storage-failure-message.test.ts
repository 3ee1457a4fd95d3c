/** A team server out of reach is named with its error's whole first sentence: an address's dots do not end it. */
import { expect, it } from 'vitest';
import { storageFailure } from '../../core/gateway/storage-failure.ts';

it('keeps the address in the reason, and stops at the end of the first sentence', () => {
  const store = { location: 'postgres://gw:***@db:5432/gateway', unreachable: () => 'PostgreSQL at postgres://gw:***@db:5432/gateway' };
  const refused = storageFailure(new Error('connect ECONNREFUSED 127.0.0.1:5432'), store);
  expect(refused?.message).toContain('(connect ECONNREFUSED 127.0.0.1:5432)');
  const two = storageFailure(new Error('Connection terminated unexpectedly. The server may have restarted.'), store);
  expect(two?.message).toContain('(Connection terminated unexpectedly)');
  expect(two?.status).toBe(503);
});
