/** Everything a request handler needs, built once by the server. */
import type { Settings } from '../settings.ts';
import type { GatewayState } from '../state/gateway-state.ts';
import type { PriceBook } from '../pricing/price-book.ts';
import type { CircuitBreaker } from '../routing/circuit-breaker.ts';
import type { LatencyTracker } from '../routing/latency-tracker.ts';
import type { RateWindows } from '../state/rate-windows.ts';
import type { Transport } from '../upstream/transport.ts';
import type { ProviderKeys } from '../upstream/provider-keys.ts';
import type { LiveConfig } from './live-config.ts';
import type { Budgets } from '../state/budgets.ts';

export interface GatewayDeps {
  settings: Settings;
  /** The shared state: SQLite (`Store`) on one machine, PostgreSQL plus Redis (`TeamState`) for a team. */
  store: GatewayState;
  live: LiveConfig;
  transport: Transport;
  prices: PriceBook;
  breaker: CircuitBreaker;
  latency: LatencyTracker;
  limiter: RateWindows;
  providerKeys: ProviderKeys;
  budgets: Budgets;
}
