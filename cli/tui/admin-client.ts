/**
 * The terminal dashboard's view of the admin API: the snapshot client and types are the core's
 * (core/admin/admin-client.ts); usage and one call's attempts are fetched here.
 */
import { request } from 'undici';

export { adminError, fetchSnapshot } from '../../core/admin/admin-client.ts';
export type { AdminEndpoint, AdminSnapshot, KeySummary, ProviderSummary } from '../../core/admin/admin-client.ts';
import { adminError } from '../../core/admin/admin-client.ts';
import type { AdminEndpoint } from '../../core/admin/admin-client.ts';

async function getJson<T>(opts: AdminEndpoint, path: string, signal?: AbortSignal): Promise<T> {
  const res = await request(`${opts.adminUrl}${path}`, { headers: { authorization: `Bearer ${opts.adminToken}` }, signal, headersTimeout: 5_000, bodyTimeout: 5_000 });
  if (res.statusCode !== 200) throw await adminError(res.statusCode, res.body);
  return (await res.body.json()) as T;
}

export interface UsageRow {
  group: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  errors: number;
  unpriced: number;
}

/** `GET /admin/usage?by=…&since=…`: spend grouped by day (local time) or model. */
export async function fetchUsage(opts: AdminEndpoint, by: 'day' | 'model' | 'key', sinceMs: number, signal?: AbortSignal): Promise<UsageRow[]> {
  const body = await getJson<{ rows: UsageRow[] }>(opts, `/admin/usage?by=${by}&since=${sinceMs}`, signal);
  return Array.isArray(body.rows) ? body.rows : [];
}

export interface CallAttemptJson {
  provider: string;
  model: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

/** `GET /admin/logs/ID`: one call with its attempts. */
export async function fetchCallAttempts(opts: AdminEndpoint, id: string, signal?: AbortSignal): Promise<CallAttemptJson[]> {
  const body = await getJson<{ attempt_list?: CallAttemptJson[] }>(opts, `/admin/logs/${encodeURIComponent(id)}`, signal);
  return Array.isArray(body.attempt_list) ? body.attempt_list : [];
}
