/**
 * Starts a real gateway on a loopback port with a throwaway data home, for integration tests.
 * Providers and keys are written through the same Store the CLI uses; secrets come from a memory
 * store unless a test asks for the real keychain.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startGateway } from '../../core/gateway/app.ts';
import type { RunningGateway, StartOptions } from '../../core/gateway/app.ts';
import type { ProviderSettings } from '../../core/providers/types.ts';
import { MemorySecretStore } from '../../core/secrets/secret-store.ts';
import type { SecretStore } from '../../core/secrets/secret-store.ts';
import type { Settings } from '../../core/settings.ts';
import { Store } from '../../core/storage/index.ts';
import type { NewKey } from '../../core/storage/keys-repo.ts';

export type TestProvider = Partial<Omit<ProviderSettings, 'seq'>> & Pick<ProviderSettings, 'name' | 'type' | 'baseUrl'> & { secret?: string };

export interface TestGatewayOptions {
  providers?: TestProvider[];
  /** Keys to create; the first one's secret is `key`. Default: one key named "test". */
  keys?: NewKey[];
  settings?: Partial<Settings>;
  demo?: boolean;
  secretStore?: SecretStore;
  clock?: StartOptions['clock'];
}

export interface TestGateway {
  gw: RunningGateway;
  home: string;
  baseUrl: string;
  /** Secret of the first key. */
  key: string;
  /** Secrets by key name. */
  keys: Record<string, string>;
  secrets: SecretStore;
  /** An official OpenAI SDK client for `key` (no retries, so tests see each answer). */
  client(opts?: { apiKey?: string; maxRetries?: number; timeout?: number }): OpenAI;
  /** Opens a second connection to the same SQLite file, like the CLI does. */
  openStore(): Store;
  /** Flushes the audit writer so rows are queryable now. */
  flush(): void;
  close(): Promise<void>;
}

export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const home = mkdtempSync(path.join(tmpdir(), 'gw-test-'));
  const secrets = opts.secretStore ?? new MemorySecretStore();
  const setup = Store.open(home);
  const keys: Record<string, string> = {};
  try {
    for (const p of opts.providers ?? []) {
      const { secret, ...rest } = p;
      const keySource = rest.keySource ?? (secret ? 'keychain' : 'none');
      setup.providers.add({
        preset: null,
        models: null,
        priority: 100,
        keyEnv: null,
        options: {},
        ...rest,
        keySource,
      });
      if (secret) await secrets.set(p.name, secret);
    }
    for (const k of opts.keys ?? [{ name: 'test' }]) keys[k.name] = setup.keys.create(k).secret;
  } finally {
    setup.close();
  }
  const gw = await startGateway({
    home,
    port: 0,
    host: '127.0.0.1',
    demo: opts.demo,
    secretStore: async () => secrets,
    settings: opts.settings,
    clock: opts.clock,
  });
  await gw.discovery;
  const firstKey = Object.values(keys)[0] ?? gw.createdKey?.secret ?? '';
  return {
    gw,
    home,
    baseUrl: gw.baseUrl,
    key: firstKey,
    keys,
    secrets,
    client: (o = {}) => new OpenAI({ apiKey: o.apiKey ?? firstKey, baseURL: gw.baseUrl, maxRetries: o.maxRetries ?? 0, timeout: o.timeout ?? 20_000 }),
    openStore: () => Store.open(home),
    flush: () => gw.deps.store.audit.flush(),
    async close() {
      await gw.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
