/**
 * One-click sign-in (see login-codes.ts): `POST /admin/login-codes` (with the admin token) issues a
 * one-time code and the page link; `POST /admin/login` trades a code for a session token, without
 * any token of its own, so it answers every failure the same way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { GatewayError } from '../errors.ts';
import { badRequest } from '../errors.ts';
import { readBody } from '../gateway/read-body.ts';
import { bearerToken } from '../gateway/auth.ts';
import { sendJson } from '../gateway/respond.ts';
import { readAdminBody } from './admin-route.ts';
import type { AdminRoute } from './admin-route.ts';
import { loginPath } from './login-codes.ts';
import type { LoginStore } from './login-codes.ts';

const exchangeSchema = z.object({ code: z.string().min(1).max(200) }).strict();
const issueSchema = z.object({ ttl_seconds: z.number().int().positive().max(900).optional() }).strict();

export const adminLoginRoutes: AdminRoute = async ({ req, res, method, path, headers, logins, holderKey }) => {
  if (method === 'POST' && path === '/admin/logout') {
    // Signs out the session that sends it (a token that is not a session, the file's or a person's, is untouched).
    req.resume();
    const token = bearerToken(req);
    if (token !== null) await logins.end(token);
    res.writeHead(204, headers);
    res.end();
    return true;
  }
  if (method !== 'POST' || path !== '/admin/login-codes') return false;
  // The body is optional: `{"ttl_seconds": N}` (at most 900) for a link printed ahead of its use.
  const raw = (await readBody(req, 4096)).toString('utf8').trim();
  let ttlSeconds: number | undefined;
  if (raw !== '') {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw badRequest('The body must be JSON: {"ttl_seconds": N}, or empty.', 'invalid_json');
    }
    const parsed = issueSchema.safeParse(json);
    if (!parsed.success) throw badRequest(`ttl_seconds: ${parsed.error.issues[0]?.message ?? 'invalid'}`, 'invalid_value', 'ttl_seconds');
    ttlSeconds = parsed.data.ttl_seconds;
  }
  const { code, expiresAt, stored } = logins.issue(ttlSeconds === undefined ? undefined : ttlSeconds * 1000, holderKey);
  // A code a team's Redis did not keep would not sign in: the failure is the answer (a 503 naming Redis), not a 201.
  if (stored) await stored;
  sendJson(res, 201, { code, path: loginPath(code), expires_at: new Date(expiresAt).toISOString() }, headers);
  return true;
};

/** `stands(session)`: whether the person whose token asked for the code still holds a live token. */
export async function exchangeLoginCode(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, logins: LoginStore, stands: (session: string) => Promise<boolean>): Promise<void> {
  const { code } = await readAdminBody(req, exchangeSchema);
  const exchanged = await logins.exchange(code);
  // A code asked for with a token revoked since is spent, like a used one.
  const session = exchanged && (await stands(exchanged.session)) ? exchanged : null;
  if (!session) {
    throw new GatewayError({ status: 401, type: 'invalid_api_key', code: 'invalid_login_code', message: 'This sign-in link was used already or has expired; run `gateway ui` for a new one.' });
  }
  sendJson(res, 200, { token: session.session, expires_at: new Date(session.expiresAt).toISOString() }, headers);
}
