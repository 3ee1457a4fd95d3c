/**
 * The tray's view of the admin API. The snapshot call and its types come from the core's public
 * entry point (the `gateway-local` package: core/index.ts); the tray adds what only it needs: reading
 * the admin token from the data home and `POST /admin/keys` for "create and copy a new key".
 *
 * Everything imported here must load inside Electron's main process, whose Node has a different
 * native ABI from the pinned Node: nothing on this path may load `better-sqlite3` (the TUI's feed
 * does, through `cli/context.ts`, which is why the tray polls the snapshot itself).
 * `test/desktop/import-graph.test.ts` holds that line.
 */
import { readFileSync } from 'node:fs';
import { adminError, dataPaths } from 'gateway-local';
import type { AdminEndpoint } from 'gateway-local';

export { fetchSnapshot } from 'gateway-local';
export type { AdminEndpoint, AdminSnapshot, KeySummary, ProviderSummary } from 'gateway-local';

/** The admin token of the gateway whose data home is `home` (the file the gateway writes on start). */
export function readAdminToken(home: string): string {
  const token = readFileSync(dataPaths(home).adminToken, 'utf8').trim();
  if (token === '') throw new Error(`The admin token file ${dataPaths(home).adminToken} is empty.`);
  return token;
}

export interface NewKeyRequest {
  name: string;
  budget_usd?: number | null;
  budget_period?: 'total' | 'daily' | 'monthly' | null;
}

export interface CreatedKey {
  name: string;
  /** The secret (`sk-gw-...`): the gateway shows it this once and keeps only its hash. */
  key: string;
}

/** `POST /admin/keys`: creates a key and returns its secret, which no later call can show again. */
export async function createKey(endpoint: AdminEndpoint, body: NewKeyRequest, signal?: AbortSignal): Promise<CreatedKey> {
  // Node's own fetch, not an `undici` import: from desktop/ that would resolve to whichever undici
  // Electron's tooling installed in desktop/node_modules, not the gateway's.
  const res = await fetch(`${endpoint.adminUrl}/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${endpoint.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: signal ?? AbortSignal.timeout(10_000),
  });
  if (res.status !== 201) throw await adminError(res.status, res);
  const created = (await res.json()) as Partial<CreatedKey>;
  if (typeof created.key !== 'string' || typeof created.name !== 'string') throw new Error('unexpected answer from POST /admin/keys');
  return { name: created.name, key: created.key };
}
