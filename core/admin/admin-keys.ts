/**
 * Admin routes that change local keys: edit limits, disable, enable, rotate (the new secret is in the
 * answer, once), delete. Each change reloads the live configuration at once, so the very next request
 * sees it. Creating and listing keys stay in admin-api.ts.
 */
import { z } from 'zod';
import { notFound } from '../errors.ts';
import { sendJson } from '../gateway/respond.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import { KEY_NAME_PATTERN, KEY_NAME_RULE } from '../storage/keys-repo.ts';
import { pathParts, readAdminBody } from './admin-route.ts';
import type { AdminRoute } from './admin-route.ts';

export const keyPatchSchema = z
  .object({
    name: z.string().regex(KEY_NAME_PATTERN, `name ${KEY_NAME_RULE}`).optional(),
    budget_usd: z.number().nonnegative().nullable().optional(),
    budget_period: z.enum(['total', 'daily', 'monthly']).nullable().optional(),
    rpm: z.number().int().positive().nullable().optional(),
    tpm: z.number().int().positive().nullable().optional(),
    models: z.array(z.string().min(1)).min(1).nullable().optional(),
  })
  .strict();

const keyJson = (k: StoredKey) => ({
  name: k.name,
  prefix: k.prefix,
  state: k.state,
  budget_usd: k.budgetUsd,
  budget_period: k.budgetPeriod,
  rpm: k.rpm,
  tpm: k.tpm,
  models: k.models,
});

export const adminKeyRoutes: AdminRoute = async ({ req, res, method, path, headers, deps }) => {
  const parts = pathParts(path, '/admin/keys/');
  if (!parts || parts.length === 0 || parts[0] === '') return false;
  const [name, action] = parts;
  const keys = deps.store.keys;
  if (parts.length > 2) throw notFound(`Unknown admin path ${method} ${path}.`);
  let answer: Record<string, unknown>;
  if (action === undefined && method === 'PATCH') {
    const b = await readAdminBody(req, keyPatchSchema);
    answer = keyJson(await keys.update(name, { name: b.name, budgetUsd: b.budget_usd, budgetPeriod: b.budget_period, rpm: b.rpm, tpm: b.tpm, models: b.models }));
  } else if (action === undefined && method === 'DELETE') {
    answer = keyJson(await keys.delete(name));
  } else if (action === undefined && method === 'GET') {
    const k = await keys.findByName(name);
    if (!k) throw notFound(`No key named "${name}".`);
    answer = keyJson(k);
  } else if (method === 'POST' && (action === 'disable' || action === 'enable')) {
    answer = keyJson(await keys.setState(name, action === 'disable' ? 'disabled' : 'active'));
  } else if (method === 'POST' && action === 'rotate') {
    const issued = await keys.rotate(name);
    answer = { ...keyJson(issued.key), key: issued.secret };
  } else {
    return false;
  }
  await deps.live.reload();
  sendJson(res, 200, answer, headers);
  return true;
};
