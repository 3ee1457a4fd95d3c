/** Everything a request handler needs, built once by the server. */
import type { Settings } from '../settings.ts';
import type { Store } from '../storage/index.ts';
import type { PriceBook } from '../pricing/price-book.ts';
import type { CircuitBreaker } from '../routing/circuit-breaker.ts';
import type { LatencyTracker } from '../routing/latency-tracker.ts';
import type { RateLimiter } from '../routing/rate-limiter.ts';
import type { Transport } from '../upstream/transport.ts';
import type { ProviderKeys } from '../upstream/provider-keys.ts';
import type { LiveConfig } from './live-config.ts';
import type { BudgetTracker } from './budget.ts';

export interface GatewayDeps {
  settings: Settings;
  store: Store;
  live: LiveConfig;
  transport: Transport;
  prices: PriceBook;
  breaker: CircuitBreaker;
  latency: LatencyTracker;
  limiter: RateLimiter;
  providerKeys: ProviderKeys;
  budgets: BudgetTracker;
}
