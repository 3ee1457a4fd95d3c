/** What each admin route module gets: one authenticated request, already past the token and Origin checks. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ZodType } from 'zod';
import { badRequest } from '../errors.ts';
import type { GatewayDeps } from '../gateway/deps.ts';
import { readJsonObject } from '../gateway/read-body.ts';
import type { LoginStore } from './login-codes.ts';

export interface AdminRequest {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: URLSearchParams;
  /** Response headers every admin answer carries (CORS for the same origin, no-store). */
  headers: Record<string, string>;
  deps: GatewayDeps;
  logins: LoginStore;
  /** Who is asking: a person's admin token name, or `admin-token` for the data home's file. */
  holder: string;
  /** The same, as the codes and sessions it asks for keep it: which token, not only whose (admin-api.ts). */
  holderKey: string;
}

/** Handles the request and returns true, or returns false when the path is not its own. */
export type AdminRoute = (r: AdminRequest) => Promise<boolean>;

/** Reads and validates a JSON body; the first problem becomes a 400 naming its field. */
export async function readAdminBody<T>(req: IncomingMessage, schema: ZodType<T>): Promise<T> {
  const { json } = await readJsonObject(req, 64 * 1024);
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue?.path.join('.') || null;
    throw badRequest(`${param ? `${param}: ` : ''}${issue?.message ?? 'invalid body'}`, 'invalid_value', param);
  }
  return parsed.data;
}

/** `/admin/keys/NAME/rotate` with prefix `/admin/keys/` → `['NAME', 'rotate']`; names are URL-encoded. */
export function pathParts(path: string, prefix: string): string[] | null {
  if (!path.startsWith(prefix)) return null;
  return path
    .slice(prefix.length)
    .split('/')
    .map((p) => decodeURIComponent(p));
}
