/**
 * A typed client for the admin API (admin-api.ts) for front ends in other processes: the terminal
 * dashboard and the tray. Node's own fetch only, so it loads anywhere (the tray's Electron main
 * process included) and pulls no native module.
 */

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

/** One call as the admin API and `gateway logs --json` give it (see call-json.ts). */
export type { CallJson } from '../call-json.ts';
import type { CallJson } from '../call-json.ts';

export interface AdminSnapshot {
  spend: { today_usd: number; month_usd: number };
  keys: KeySummary[];
  providers: ProviderSummary[];
  recent: CallJson[];
  price_version: string | null;
}

/** An admin answer other than the expected one, as an Error with the envelope's message when there is one. */
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

/** `GET /admin/snapshot`: spend, keys, provider health and the latest calls. */
export async function fetchSnapshot(opts: AdminEndpoint, signal?: AbortSignal): Promise<AdminSnapshot> {
  let res: Response;
  try {
    res = await fetch(`${opts.adminUrl}/admin/snapshot?recent=100`, {
      headers: { authorization: `Bearer ${opts.adminToken}` },
      signal: signal ?? AbortSignal.timeout(5_000),
    });
  } catch (err) {
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, a timeout) is in its cause.
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(cause ? [cause.code, cause.message].filter(Boolean).join(' ') : (err as Error).message);
  }
  if (res.status !== 200) throw await adminError(res.status, res);
  const snap = (await res.json()) as AdminSnapshot;
  if (typeof snap !== 'object' || snap === null || !Array.isArray(snap.keys) || !Array.isArray(snap.providers) || !Array.isArray(snap.recent)) {
    throw new Error('unexpected snapshot shape');
  }
  return snap;
}
