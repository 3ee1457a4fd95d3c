/**
 * The admin API under `/admin/*`, for the terminal UI, the dashboard page and the tray. It needs the
 * admin token (a user-only file in the data home) and refuses any browser Origin but the gateway's
 * own, even ones configured for CORS on `/v1`.
 */
import { KEY_NAME_PATTERN, KEY_NAME_RULE } from '../storage/keys-repo.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { badRequest, forbidden, GatewayError, notFound } from '../errors.ts';
import { callDetailJson, callToJson } from '../call-json.ts';
import type { CallRow } from '../storage/audit-writer.ts';
import { StorageError } from '../storage/db.ts';
import { bearerToken } from '../gateway/auth.ts';
import type { GatewayDeps } from '../gateway/deps.ts';
import { readJsonObject } from '../gateway/read-body.ts';
import { sendError, sendJson } from '../gateway/respond.ts';
import { tokenMatches } from '../gateway/admin-token.ts';
import { storageFailure } from '../gateway/storage-failure.ts';
import { keySummaries, providerSummaries, snapshot } from './snapshot.ts';
import { checkProviders } from './provider-check.ts';
import { adminKeyRoutes } from './admin-keys.ts';
import { adminLogRoutes } from './admin-logs.ts';
import { adminProviderRoutes } from './admin-providers.ts';
import { adminLoginRoutes, exchangeLoginCode } from './admin-login.ts';
import { roundUsdFields } from './money-json.ts';
import { ADMIN_FILE_HOLDER, LoginCodes } from './login-codes.ts';
import type { LoginStore } from './login-codes.ts';
import type { AdminAction } from './admin-action.ts';

export type { AdminAction } from './admin-action.ts';
import { looksLikeAdminToken } from '../storage/admin-tokens.ts';
import type { AdminTokenInfo } from '../storage/admin-tokens.ts';

const providerTestSchema = z.object({ name: z.string().min(1).optional() }).strict();

export type AdminHandler = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, cors: Record<string, string>) => Promise<void>;

const createKeySchema = z
  .object({
    name: z.string().regex(KEY_NAME_PATTERN, `name ${KEY_NAME_RULE}`),
    budget_usd: z.number().positive().nullable().optional(),
    budget_period: z.enum(['total', 'daily', 'monthly']).nullable().optional(),
    rpm: z.number().int().positive().nullable().optional(),
    tpm: z.number().int().positive().nullable().optional(),
    models: z.array(z.string().min(1)).nullable().optional(),
  })
  .strict();

function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host.toLowerCase() === (req.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

const ROUTES = [adminKeyRoutes, adminProviderRoutes, adminLogRoutes, adminLoginRoutes];

/**
 * Who holds the bearer token (the data home's file, a dashboard session, or a person's admin token): `name` for
 * log lines, `key` for the codes and sessions that token asks for. A person's key names the very token (its
 * prefix and creation time), so a session ends with that token even when the name is issued again: by name,
 * re-issuing a revoked person's token (the usual answer to a stolen laptop) revived the thief's sessions.
 */
interface Holder {
  name: string;
  key: string;
}

const FILE_HOLDER: Holder = { name: ADMIN_FILE_HOLDER, key: ADMIN_FILE_HOLDER };
const SEP = '\u0000';
const tokenKey = (t: AdminTokenInfo): string => `${t.name}${SEP}${t.prefix}${SEP}${t.createdAt}`;

async function holderOf(given: string | null, fileToken: string, deps: GatewayDeps, logins: LoginStore): Promise<Holder | null> {
  if (tokenMatches(given, fileToken)) return FILE_HOLDER;
  const session = await logins.sessionHolder(given);
  // A session acts as the person whose token asked for its code, for as long as that token stands: revoking it
  // ends the sessions (and spends the codes) it opened, as it ends the token (looked up each time, every instance).
  if (session !== null) return session === ADMIN_FILE_HOLDER ? FILE_HOLDER : await tokenStands(deps, session);
  // Looked up on every request (admin traffic is light), so a revocation through any instance holds at once.
  const token = looksLikeAdminToken(given) ? await deps.store.adminTokens.holderOf(given) : null;
  return token ? { name: token.name, key: tokenKey(token) } : null;
}

/** The holder of a session opened through a person's token, while that token is live (a key of another form: none). */
async function tokenStands(deps: GatewayDeps, key: string): Promise<Holder | null> {
  const live = (await deps.store.adminTokens.list()).find((t) => tokenKey(t) === key);
  return live ? { name: live.name, key } : null;
}

export function createAdminHandler(
  deps: GatewayDeps,
  token: string,
  listeners: Set<(row: CallRow) => void>,
  logins: LoginStore = new LoginCodes(),
  actions: Set<(action: AdminAction) => void> = new Set(),
): AdminHandler {
  return async (req, res, path, query, cors) => {
    const headers = { ...(sameOrigin(req) ? cors : {}), 'cache-control': 'no-store' };
    try {
      if (!sameOrigin(req)) throw forbidden('The admin API answers no foreign Origin.', 'origin_not_allowed');
      // The one admin route without a token: a one-time login code is its own credential.
      if (req.method === 'POST' && path === '/admin/login') {
        return await exchangeLoginCode(req, res, headers, logins, async (session) => (await holderOf(session, token, deps, logins)) !== null);
      }
      const who = await holderOf(bearerToken(req), token, deps, logins);
      if (who === null) {
        throw new GatewayError({ status: 401, type: 'invalid_api_key', code: 'invalid_admin_token', message: 'The admin API needs `Authorization: Bearer <admin token>`: the file `admin-token` in the data home, or a token from `gateway admin-tokens create`.' });
      }
      const method = req.method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD' && actions.size > 0) {
        res.once('finish', () => {
          const action: AdminAction = { time: Date.now(), holder: who.name, method, path, status: res.statusCode };
          for (const fn of actions) fn(action);
        });
      }
      if (method === 'GET') req.resume();
      const { store } = deps;
      await store.drainAudit();
      if (method === 'GET' && path === '/admin/snapshot') return sendJson(res, 200, await snapshot(deps, query.get('recent')), headers);
      if (method === 'GET' && path === '/admin/keys') return sendJson(res, 200, { keys: roundUsdFields(await keySummaries(deps)) }, headers);
      if (method === 'POST' && path === '/admin/keys') {
        const { json } = await readJsonObject(req, 64 * 1024);
        const parsed = createKeySchema.safeParse(json);
        if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid body', 'invalid_value', parsed.error.issues[0]?.path.join('.') ?? null);
        const b = parsed.data;
        const issued = await store.keys.create({ name: b.name, budgetUsd: b.budget_usd ?? null, budgetPeriod: b.budget_period ?? null, rpm: b.rpm ?? null, tpm: b.tpm ?? null, models: b.models ?? null });
        await deps.live.reload();
        return sendJson(res, 201, { name: issued.key.name, key: issued.secret }, headers);
      }
      if (method === 'GET' && path === '/admin/providers') return sendJson(res, 200, { providers: await providerSummaries(deps) }, headers);
      if (method === 'POST' && path === '/admin/providers/test') {
        const { json } = await readJsonObject(req, 4 * 1024);
        const parsed = providerTestSchema.safeParse(json);
        if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid body', 'invalid_value', parsed.error.issues[0]?.path.join('.') ?? null);
        const only = parsed.data.name;
        await deps.live.reloadIfChanged();
        const list = deps.live.providers.filter((p) => !only || p.settings.name === only);
        if (only && list.length === 0) throw notFound(`No provider named "${only}".`);
        const served = (name: string) => [...(deps.live.providersByName.get(name)?.models ?? [])];
        const results = await checkProviders(list.map((p) => p.settings), deps.providerKeys, deps.transport, served, "in the gateway's environment");
        return sendJson(res, 200, { results }, headers);
      }
      if (method === 'GET' && path === '/admin/usage') {
        const by = query.get('by') ?? 'model';
        if (by !== 'key' && by !== 'model' && by !== 'provider' && by !== 'day') throw badRequest('by must be key, model, provider or day', 'invalid_value', 'by');
        const since = query.get('since');
        return sendJson(res, 200, { by, rows: roundUsdFields(await store.calls.usageSummary({ by, since: since ? Number(since) || Date.parse(since) : undefined })) }, headers);
      }
      if (method === 'GET' && path === '/admin/logs') {
        const limit = Math.min(1000, Number(query.get('limit') ?? 100) || 100);
        const before = query.get('before');
        return sendJson(res, 200, { calls: (await store.calls.listCalls({ limit, beforeTime: before ? Number(before) : undefined })).map(callToJson) }, headers);
      }
      if (method === 'GET' && path.startsWith('/admin/logs/') && path !== '/admin/logs/search') {
        const call = await store.calls.getCall(decodeURIComponent(path.slice('/admin/logs/'.length)));
        if (!call) throw notFound('No call with that id.');
        return sendJson(res, 200, callDetailJson(call), headers);
      }
      if (method === 'GET' && path === '/admin/events') return streamEvents(req, res, headers, listeners);
      for (const route of ROUTES) {
        if (await route({ req, res, method, path, query, headers, deps, logins, holder: who.name, holderKey: who.key })) return;
      }
      throw notFound(`Unknown admin path ${method} ${path}.`);
    } catch (err) {
      const failure = storageFailure(err, deps.store);
      if (failure) return void sendError(res, failure, headers);
      if (err instanceof StorageError) return void sendError(res, err.code.endsWith('_not_found') ? notFound(err.message) : badRequest(err.message, err.code), headers);
      sendError(res, err, headers);
    }
  };
}

/** What a subscriber may leave unread before it is dropped (a suspended `gateway top`, a stalled tab). */
export const MAX_EVENT_BUFFER_BYTES = 1024 * 1024;

/**
 * Server-sent events: one `call` event per audit row, and a comment every 15 s to keep proxies quiet.
 * A subscriber that stops reading is dropped once its unread bytes pass the bound, never buffered without one.
 */
function streamEvents(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, listeners: Set<(row: CallRow) => void>): void {
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(': connected\n\n');
  const onRow = (row: CallRow) => {
    if (res.writableLength > MAX_EVENT_BUFFER_BYTES) {
      stop();
      res.destroy();
      return;
    }
    res.write(`event: call\ndata: ${JSON.stringify(callToJson(row))}\n\n`);
  };
  listeners.add(onRow);
  const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
  ping.unref();
  const stop = () => {
    clearInterval(ping);
    listeners.delete(onRow);
  };
  // Only the response's 'close' means the subscriber left: a GET request's own 'close' fires as soon as
  // its (empty) body has been read, which would unsubscribe every client at once.
  res.on('close', stop);
}
