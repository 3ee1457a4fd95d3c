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
