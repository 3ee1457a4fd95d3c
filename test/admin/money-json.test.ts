/** The admin API's money fields as the ledger writes them: sums rounded to its unit, other numbers untouched. */
import { describe, expect, it } from 'vitest';
import { roundUsdFields } from '../../core/admin/money-json.ts';

describe('roundUsdFields', () => {
  it('rounds every number under a key ending in usd, at any depth, and nothing else', () => {
    const noisy = 0.00012 + 0.00000000000000002;
    expect(noisy).not.toBe(0.00012);
    const out = roundUsdFields({
      spend: { today_usd: 0.1 + 0.2, month_usd: noisy },
      rows: [{ model: 'm', cost_usd: 2.3000000000000003e-5, requests: 3 }],
      providers: [{ name: 'p', spent_today_usd: 0.00025200000000000005, latency_ms: 1.5 }],
      budget_usd: null,
    });
    expect(out).toEqual({
      spend: { today_usd: 0.3, month_usd: 0.00012 },
      rows: [{ model: 'm', cost_usd: 0.000023, requests: 3 }],
      providers: [{ name: 'p', spent_today_usd: 0.000252, latency_ms: 1.5 }],
      budget_usd: null,
    });
  });
});
