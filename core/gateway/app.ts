/**
 * Starts a gateway on a data home: storage, live configuration, providers, the demo upstream, the
 * HTTP server and the admin API. The CLI's `start`, the tests and the tray all use this.
 */
import type { Server } from 'node:http';
import { dataPaths, ensureDataHome } from '../home.ts';
import { DEMO_MODELS, startDemoUpstream } from '../demo/demo-upstream.ts';
import { DEFAULT_BASE_URLS } from '../providers/presets.ts';
import type { DemoUpstream } from '../demo/demo-upstream.ts';
import { PriceBook } from '../pricing/price-book.ts';
import type { UserPrice } from '../pricing/price.ts';
import { fromStoredPrice } from '../pricing/stored-price.ts';
import type { GatewayState } from '../state/gateway-state.ts';
import { openGatewayState } from '../state/open-state.ts';
import { teamUrls } from '../state/team-urls.ts';
import { refuseKeychainInTeamMode } from '../secrets/team-secrets.ts';
import { CircuitBreaker } from '../routing/circuit-breaker.ts';
import type { Clock } from '../routing/clock.ts';
import { LatencyTracker } from '../routing/latency-tracker.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import { openKeychain } from '../secrets/keychain.ts';
import { DEFAULT_AUDIT_MAX_BYTES, loadSettings } from '../settings.ts';
import type { Settings } from '../settings.ts';
import type { CallRow } from '../storage/audit-writer.ts';
import { ProviderKeys } from '../upstream/provider-keys.ts';
import { Transport } from '../upstream/transport.ts';
import type { AdminAction, AdminHandler } from '../admin/admin-api.ts';
import { LoginCodes, loginPath } from '../admin/login-codes.ts';
import { createUiHandler } from '../ui/ui-handler.ts';
import { ensureAdminToken } from './admin-token.ts';
import type { GatewayDeps } from './deps.ts';
import { refreshProviderModels } from './discovery.ts';
import type { RefreshResult } from './discovery.ts';
import { InflightCalls } from './inflight.ts';
import { releaseMemoryWhenIdle } from './idle-memory.ts';
import { keepTickShapes } from './tick-shapes.ts';
import { LiveConfig } from './live-config.ts';
import { createGatewayServer, listen } from './server.ts';
import { poolSizes } from '../upstream/pool-sizes.ts';

export interface StartOptions {
  home: string;
  port?: number;
  host?: string;
  /** Add the demo provider when absent, and a key when none exists. */
  demo?: boolean;
  /** Where provider secrets come from; defaults to the OS keychain, opened on first need. */
  secretStore?: () => Promise<SecretStore | null>;
  settings?: Partial<Settings>;
  clock?: Clock;
  /** Skip the model refresh on start (tests with fixed lists). */
  skipDiscovery?: boolean;
  /** Team mode: PostgreSQL URL (else `settings.database`, else GATEWAY_DATABASE_URL). */
  database?: string;
  /** Team mode: Redis URL (else `settings.redis`, else GATEWAY_REDIS_URL). */
  redis?: string;
}

export interface RunningGateway {
  url: string;
  baseUrl: string;
  port: number;
  host: string;
  home: string;
  adminToken: string;
  deps: GatewayDeps;
  server: Server;
  /** The key created by `--demo` when none existed (shown once). */
  createdKey: { name: string; secret: string } | null;
  /** Resolves when the start-up model refresh finished. */
  discovery: Promise<RefreshResult[]>;
  /**
   * A one-time sign-in link to the dashboard, valid `ttlMs` (what `POST /admin/login-codes` issues, without
   * a request to itself: that loaded Node's fetch and its HTTP client into the server for one line of output).
   */
  loginLink(ttlMs: number): string;
  onCall(fn: (row: CallRow) => void): () => void;
  /** Every change made through the admin API, naming who made it (the person's admin token name). */
  onAdminAction(fn: (action: AdminAction) => void): () => void;
  /**
   * Graceful stop: refuses new calls, lets calls in flight finish for `settings.shutdownGraceMs` (or
   * `graceMs`), cuts the rest (each gets an error event and its audit row), then flushes and closes
   * the store, last.
   */
  close(opts?: { graceMs?: number }): Promise<void>;
  /** The second signal: cut every call in flight, give them a moment to write their rows, flush and close the store. */
  stopNow(): Promise<void>;
}

async function ensureDemo(store: GatewayState): Promise<{ name: string; secret: string } | null> {
  if (!(await store.providers.list()).some((p) => p.type === 'demo')) {
    const name = (await store.providers.get('demo')) ? 'demo-local' : 'demo';
    await store.providers.add({ name, type: 'demo', preset: null, baseUrl: DEFAULT_BASE_URLS.demo ?? '', models: [...DEMO_MODELS], priority: 100, keyEnv: null, keySource: 'none', options: {} });
  }
  if ((await store.keys.list()).some((k) => k.state === 'active')) return null;
  const name = (await store.keys.findByName('demo')) ? `demo-${Date.now()}` : 'demo';
  const issued = await store.keys.create({ name });
  return { name, secret: issued.secret };
}

export async function startGateway(opts: StartOptions): Promise<RunningGateway> {
  const home = ensureDataHome(opts.home);
  const paths = dataPaths(home);
  const settings = loadSettings(paths.settings, { ...opts.settings, port: opts.port ?? opts.settings?.port, host: opts.host ?? opts.settings?.host });
  // Retention by rows, bytes and age runs on the audit thread after its writes, not once a start.
  const team = teamUrls({ database: opts.database ?? settings.database, redis: opts.redis ?? settings.redis });
  const { state: store, budgets, limiter, logins: sharedLogins } = await openGatewayState({
    home,
    team: team ?? undefined,
    server: true,
    clock: opts.clock,
    audit: {
      retention: {
        maxRows: settings.audit.maxRows,
        maxBytes: settings.audit.maxBytes ?? DEFAULT_AUDIT_MAX_BYTES,
        maxAgeMs: settings.audit.retentionDays * 86_400_000,
      },
    },
  });
  const createdKey = opts.demo ? await ensureDemo(store) : null;
  const adminToken = ensureAdminToken(paths.adminToken);

  let demo: DemoUpstream | null = null;
  let demoStarting: Promise<void> | null = null;
  const needsDemo = () => live.providers.some((p) => p.settings.type === 'demo');
  const startDemo = async () => {
    demoStarting ??= startDemoUpstream().then((d) => {
      demo = d;
    });
    await demoStarting;
  };
  if ((await store.providers.list()).some((p) => p.type === 'demo')) await startDemo();

  let keychain: Promise<SecretStore | null> | null = null;
  // A team's provider keys come from the server's environment: the OS keychain is one laptop's.
  const secretStore = opts.secretStore ?? (team ? refuseKeychainInTeamMode : () => (keychain ??= openKeychain(home).catch(() => null)));
  const providerKeys = new ProviderKeys(secretStore);
  const prices = new PriceBook();
  const live = new LiveConfig(store, () => demo?.baseUrl ?? null);
  const applyPrices = () => {
    const map: Record<string, UserPrice> = {};
    for (const p of live.userPrices) map[p.model] = fromStoredPrice(p);
    prices.setUserPrices(map);
  };
  live.onReload(() => {
    applyPrices();
    providerKeys.clear();
    if (!demo && needsDemo()) void startDemo().then(() => live.reload());
  });
  await live.reload();

  const transport = new Transport(settings.timeouts.connectMs, { connections: settings.upstream.connections, queueTimeoutMs: settings.upstream.queueTimeoutMs });
  const applyPoolSizes = () => transport.setPoolSizes(poolSizes(live.providers.map((p) => p.settings), settings));
  applyPoolSizes();
  live.onReload(applyPoolSizes);
  const deps: GatewayDeps = {
    settings,
    store,
    live,
    transport,
    prices,
    breaker: new CircuitBreaker({ failureThreshold: settings.routing.breakerFailures, cooldownMs: settings.routing.breakerCooldownMs, clock: opts.clock }),
    latency: new LatencyTracker(),
    limiter,
    providerKeys,
    budgets,
  };

  const listeners = new Set<(row: CallRow) => void>();
  const adminActions = new Set<(action: AdminAction) => void>();
  const logins = sharedLogins ?? new LoginCodes();
  // The admin API (its routes and their schemas, ~30 ms of a start) loads with the first admin request.
  let adminHandler: Promise<AdminHandler> | null = null;
  const admin: AdminHandler = async (req, res, path, query, cors) => {
    adminHandler ??= import('../admin/admin-api.ts').then((m) => m.createAdminHandler(deps, adminToken, listeners, logins, adminActions));
    return (await adminHandler)(req, res, path, query, cors);
  };
  const inflight = new InflightCalls();
  const server = createGatewayServer(deps, {
    admin,
    inflight,
    ui: createUiHandler(),
    onCall: (row) => {
      for (const fn of listeners) fn(row);
    },
  });
  let address: Awaited<ReturnType<typeof listen>>;
  try {
    address = await listen(server, settings.port, settings.host);
  } catch (err) {
    // A failed start (port in use) must not leave anything open: the demo upstream's listening
    // socket would keep `gateway start` alive after it printed its error.
    await store.close();
    await (demo as DemoUpstream | null)?.close();
    await transport.close();
    throw err;
  }
  live.startPolling(250);
  keepTickShapes();
  const idleMemory = releaseMemoryWhenIdle({ busy: () => inflight.size > 0 });

  // A gateway replaying from a cassette contacts no provider, not even for their model lists.
  const discovery = opts.skipDiscovery || settings.cassettes?.mode === 'replay'
    ? Promise.resolve([])
    : refreshProviderModels(store, providerKeys, transport, undefined, (p) => (p.type === 'demo' ? (demo?.baseUrl ?? p.baseUrl) : p.baseUrl))
        .catch(() => [] as RefreshResult[])
        .then(async (r) => {
          await live.reloadIfChanged();
          return r;
        });

  // At start and hourly (an idle gateway writes nothing to trigger it). SQLite: on the audit thread, since
  // deleting a backlog of old rows at 1M calls would hold the request thread for seconds; a team store
  // purges in PostgreSQL.
  const retention = (rowsToo = false) => {
    if (store.audit.enforceRetention) return void store.audit.enforceRetention();
    try {
      const purged = store.calls.purgeCalls({ olderThanMs: settings.audit.retentionDays * 86_400_000, keepMaxRows: rowsToo ? settings.audit.maxRows : undefined });
      if (purged instanceof Promise) purged.catch(() => undefined);
    } catch {
      /* retention is best effort; the next run tries again */
    }
  };
  retention(true);
  const retentionTimer = setInterval(retention, 3_600_000);
  retentionTimer.unref();

  const displayHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${displayHost}:${address.port}`;
  let closed = false;
  return {
    url,
    baseUrl: `${url}/v1`,
    port: address.port,
    host: address.address,
    home,
    adminToken,
    deps,
    server,
    createdKey,
    discovery,
    loginLink(ttlMs) {
      return `${url}${loginPath(logins.issue(ttlMs).code)}`;
    },
    onAdminAction(fn) {
      adminActions.add(fn);
      return () => adminActions.delete(fn);
    },
    onCall(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async stopNow() {
      inflight.cutAll();
      await inflight.drain(1_000);
      await budgets.close?.();
      await store.close();
    },
    async close(opts) {
      if (closed) return;
      closed = true;
      clearInterval(retentionTimer);
      idleMemory.stop();
      live.stop();
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Drain: calls in flight finish and write their rows; new calls get a 503.
      const drained = await inflight.drain(opts?.graceMs ?? settings.shutdownGraceMs);
      if (!drained) {
        inflight.cutAll();
        // A cut call settles its partial usage (a tokenizer count at most) before its row: this is short.
        await inflight.drain(5_000);
      }
      server.closeAllConnections();
      await serverClosed;
      await discovery.catch(() => undefined);
      await budgets.close?.();
      // The store closes last: every call above has queued its audit row, and close() flushes them.
      await store.close();
      await (demo as DemoUpstream | null)?.close();
      await transport.close();
    },
  };
}
