/**
 * `gateway providers test` without a running gateway: the CLI checks each provider itself, with this
 * shell's environment and the keychain (a demo provider gets a demo upstream of its own for the check).
 */
import { checkProviders, type ProviderVerdict } from '../../core/admin/provider-check.ts';
import { startDemoUpstream } from '../../core/demo/demo-upstream.ts';
import { openKeychain } from '../../core/secrets/keychain.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';
import { ProviderKeys } from '../../core/upstream/provider-keys.ts';
import { Transport } from '../../core/upstream/transport.ts';

export type { ProviderVerdict };

export async function testProviders(store: GatewayState, home: string, only?: string): Promise<ProviderVerdict[]> {
  const transport = new Transport(10_000);
  const keys = new ProviderKeys(async () => openKeychain(home).catch(() => null));
  const served = await store.providers.allServedModels();
  const list = (await store.providers.list()).filter((p) => !only || p.name === only);
  const demo = list.some((p) => p.type === 'demo') ? await startDemoUpstream(0) : null;
  try {
    const withDemo = list.map((p) => (p.type === 'demo' && demo ? { ...p, baseUrl: demo.baseUrl } : p));
    return await checkProviders(withDemo, keys, transport, (name) => served.get(name) ?? [], 'in this shell');
  } finally {
    await transport.close();
    await demo?.close();
  }
}
