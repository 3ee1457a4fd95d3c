/** A key's spend as `keys list --json` gives it: the ledger's figures, without float noise from summing rows. */
import { describe, expect, it } from 'vitest';
import { keySpend } from '../../cli/commands/keys.ts';
import type { CallQueries } from '../../core/state/gateway-state.ts';
import type { StoredKey } from '../../core/storage/keys-repo.ts';

describe('keySpend', () => {
  it('rounds the spent and remaining amounts to the ledger unit', async () => {
    // Summed rows and a difference of floats: 0.1 + 0.2 is 0.30000000000000004, 0.01 - 0.00814 is 0.0018600000000000005.
    const calls = { spendForKey: async () => 0.1 + 0.2 } as unknown as CallQueries;
    expect(0.1 + 0.2).not.toBe(0.3);
    const s = await keySpend(calls, { id: 'k', budgetUsd: 0.5, budgetPeriod: 'total' } as unknown as StoredKey);
    expect(s.spent_usd).toBe(0.3);
    expect(s.remaining_usd).toBe(0.2);
    const small = await keySpend({ spendForKey: async () => 0.00814 } as unknown as CallQueries, { id: 'k', budgetUsd: 0.01, budgetPeriod: 'total' } as unknown as StoredKey);
    expect(0.01 - 0.00814).not.toBe(0.00186);
    expect(String(small.remaining_usd)).toBe('0.00186');
  });
});
