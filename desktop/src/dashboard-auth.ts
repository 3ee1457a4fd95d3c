/**
 * How the dashboard window authenticates to the admin API without the page ever holding the token.
 *
 * The window loads `<gateway>/ui` in a session of its own; `main.ts` hooks that session's
 * `webRequest.onBeforeSendHeaders` and passes every request through `withAdminToken`, which adds
 * `Authorization: Bearer <admin token>` to requests for the gateway's own origin under `/admin/`, and
 * to nothing else. So:
 * - the page's `fetch('/admin/...')` and `new EventSource('/admin/events')` (which cannot set headers
 *   at all) both work with no token form and no token in page JavaScript, localStorage or the URL;
 * - any other origin, and the gateway's `/v1` API, never see the token;
 * - a token the page sends itself (a stale one typed into its form) is replaced by the current one.
 * The alternative, typing the token into the page's form, would put the secret in the renderer.
 */

export interface AdminTarget {
  /** The gateway's origin, e.g. `http://127.0.0.1:4141`. */
  url: string;
  adminToken: string;
}

/** Whether `requestUrl` is the admin API of `gatewayUrl` (same scheme, host and port; path under `/admin/`). */
export function isAdminRequest(requestUrl: string, gatewayUrl: string): boolean {
  let req: URL;
  let gw: URL;
  try {
    req = new URL(requestUrl);
    gw = new URL(gatewayUrl);
  } catch {
    return false;
  }
  // URL parsing normalises the path ("/admin/../v1" is "/v1") and the default port.
  return req.origin === gw.origin && (req.pathname === '/admin' || req.pathname.startsWith('/admin/'));
}

/** The request headers to send: `headers` with the admin token set when the request is for the admin API. */
export function withAdminToken(requestUrl: string, headers: Record<string, string>, target: AdminTarget | null): Record<string, string> {
  if (!target || !isAdminRequest(requestUrl, target.url)) return headers;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== 'authorization') out[k] = v;
  out.Authorization = `Bearer ${target.adminToken}`;
  return out;
}

/** Whether the dashboard window may navigate to `url` (only within the gateway's origin; anything else opens in the browser). */
export function staysInDashboard(url: string, gatewayUrl: string): boolean {
  try {
    return new URL(url).origin === new URL(gatewayUrl).origin;
  } catch {
    return false;
  }
}
