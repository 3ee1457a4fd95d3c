/** The dashboard's view of the admin API (`core/admin/admin-api.ts`): `GET /admin/snapshot`. */
import { request } from 'undici';
import type { CallJson } from '../../core/call-json.ts';

export interface AdminEndpoint {
  /** The gateway's origin, e.g. `http://127.0.0.1:4141` (the admin API is under `/admin`). */
  adminUrl: string;
  adminToken: string;
}

export interface KeySummary {
  name: string;
  prefix: string;
  state: string;
  budget_usd: number | null;
  budget_period: string | null;
  spent_usd: number;
  spent_period: string;
  remaining_usd: number | null;
  rpm?: number | null;
  tpm?: number | null;
  models?: string[] | null;
}

export interface ProviderSummary {
  name: string;
  type: string;
  preset: string | null;
  models: string[];
  spent_today_usd: number;
  spent_month_usd: number;
  health: string;
  consecutive_failures: number;
  next_probe_at: number | null;
  base_url?: string;
  priority?: number;
}

export interface AdminSnapshot {
  spend: { today_usd: number; month_usd: number };
  keys: KeySummary[];
  providers: ProviderSummary[];
  recent: CallJson[];
  price_version: string | null;
}

/** An admin answer other than 200, as an Error with the envelope's message when there is one. */
export async function adminError(status: number, body: { text(): Promise<string> }): Promise<Error> {
  let detail = '';
  try {
    const text = await body.text();
    try {
      detail = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {
      detail = text;
    }
  } catch {
    /* no body */
  }
  return new Error(`HTTP ${status}${detail ? `: ${detail.slice(0, 200)}` : ''}`);
}

export async function fetchSnapshot(opts: AdminEndpoint, signal?: AbortSignal): Promise<AdminSnapshot> {
  const res = await request(`${opts.adminUrl}/admin/snapshot?recent=100`, {
    headers: { authorization: `Bearer ${opts.adminToken}` },
    signal,
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
  });
  if (res.statusCode !== 200) throw await adminError(res.statusCode, res.body);
  const snap = (await res.body.json()) as AdminSnapshot;
  if (typeof snap !== 'object' || snap === null || !Array.isArray(snap.keys) || !Array.isArray(snap.providers) || !Array.isArray(snap.recent)) {
    throw new Error('unexpected snapshot shape');
  }
  return snap;
}

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
