/** A provider's settings as the store hands them to an adapter, for tests that call adapters directly. */
import type { ProviderSettings } from '../../core/providers/types.ts';

/** Neutral defaults (no preset or model list, a keychain key, no options) under the test's own name, type and URL. */
export const providerSettings = (own: Pick<ProviderSettings, 'name' | 'type' | 'baseUrl'> & Partial<ProviderSettings>): ProviderSettings => ({
  preset: null,
  models: null,
  priority: 100,
  keyEnv: null,
  keySource: 'keychain',
  options: {},
  seq: 1,
  ...own,
});
