/**
 * Admin routes that manage providers from the dashboard: add one (its key only as a reference to an
 * environment variable: a secret never travels through the page), change its priority, refresh its
 * models, test it through the running gateway, remove it; and per-provider latency and error rates.
 */
import { z } from 'zod';
import { badRequest, notFound } from '../errors.ts';
import { refreshProviderModels } from '../gateway/discovery.ts';
import { sendJson } from '../gateway/respond.ts';
import { DEFAULT_BASE_URLS, isPresetName, PRESET_NAMES, PRESETS } from '../providers/presets.ts';
import { PROVIDER_TYPES } from '../providers/types.ts';
import type { ProviderSettings } from '../providers/types.ts';
import { DEMO_MODELS } from '../demo/demo-upstream.ts';
import { checkProviders } from './provider-check.ts';
import { pathParts, readAdminBody } from './admin-route.ts';
import type { AdminRequest, AdminRoute } from './admin-route.ts';

export const addProviderSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a provider name is 1-64 letters, digits, dots, dashes or underscores'),
    type: z.enum(PROVIDER_TYPES),
    preset: z.enum(PRESET_NAMES as [string, ...string[]]).nullable().optional(),
    base_url: z.url().nullable().optional(),
    models: z.array(z.string().min(1)).min(1).nullable().optional(),
    priority: z.number().int().optional(),
    key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'key_env is the name of an environment variable').nullable().optional(),
  })
  .strict();

const patchProviderSchema = z.object({ priority: z.number().int() }).strict();

function demoAware(r: AdminRequest, name: string): (p: ProviderSettings) => string {
  return (p) => (p.type === 'demo' ? (r.deps.live.providersByName.get(name)?.settings.baseUrl ?? p.baseUrl) : p.baseUrl);
}

async function refresh(r: AdminRequest, name: string) {
  const [result] = await refreshProviderModels(r.deps.store, r.deps.providerKeys, r.deps.transport, name, demoAware(r, name));
  await r.deps.live.reload();
  return result ?? { provider: name, ok: true as const, models: (await r.deps.store.providers.get(name))?.models ?? [] };
}

async function addProvider(r: AdminRequest): Promise<void> {
  const b = await readAdminBody(r.req, addProviderSchema);
  const preset = b.preset ?? null;
  if (preset !== null && b.type !== 'openai-compatible') throw badRequest('a preset goes with type openai-compatible', 'invalid_value', 'preset');
  const p = preset !== null && isPresetName(preset) ? PRESETS[preset] : null;
  const baseUrl = (b.base_url ?? p?.baseUrl ?? DEFAULT_BASE_URLS[b.type] ?? '').replace(/\/+$/, '');
  if (!baseUrl && b.type !== 'demo') throw badRequest(`base_url is required for type ${b.type}`, 'missing_parameter', 'base_url');
  const needsKey = b.type === 'demo' ? false : p ? p.needsKey : b.type !== 'openai-compatible';
  if (needsKey && !b.key_env) throw badRequest(`provider "${b.name}" needs an API key: name the environment variable that holds it (key_env)`, 'missing_parameter', 'key_env');
  const models = b.models ?? (b.type === 'demo' ? [...DEMO_MODELS] : null);
  await r.deps.store.providers.add({
    name: b.name,
    type: b.type,
    preset,
    baseUrl,
    models,
    priority: b.priority ?? 100,
    keyEnv: b.key_env ?? null,
    keySource: b.key_env ? 'env' : 'none',
    options: { ...(p?.options ?? {}) },
  });
  await r.deps.live.reload();
  const discovered = models === null ? await refresh(r, b.name) : { provider: b.name, ok: true as const, models };
  const keyNote = b.key_env && !process.env[b.key_env] ? `$${b.key_env} is not set where the gateway runs; set it and restart the gateway, or calls will fail.` : null;
  sendJson(r.res, 201, { name: b.name, type: b.type, base_url: baseUrl, refresh: discovered, note: keyNote }, r.headers);
}

export const adminProviderRoutes: AdminRoute = async (r) => {
  const { method, path, query, deps } = r;
  if (path === '/admin/providers' && method === 'POST') {
    await addProvider(r);
    return true;
  }
  if (path === '/admin/providers/stats' && method === 'GET') {
    const until = Number(query.get('until')) || Date.now();
    const since = Number(query.get('since')) || until - 24 * 3_600_000;
    if (since >= until) throw badRequest('since must be before until', 'invalid_value', 'since');
    const buckets = Number(query.get('buckets')) || 24;
    sendJson(r.res, 200, { since, until, providers: await deps.store.calls.providerStats({ since, until, buckets }) }, r.headers);
    return true;
  }
  const parts = pathParts(path, '/admin/providers/');
  if (!parts || parts.length === 0 || parts[0] === '' || parts.length > 2) return false;
  const [name, action] = parts;
  if (!(await deps.store.providers.get(name))) throw notFound(`No provider named "${name}".`);
  if (action === undefined && method === 'DELETE') {
    const removed = await deps.store.providers.remove(name);
    await deps.live.reload();
    const note = removed.keySource === 'keychain' ? `Its key stays in the OS keychain; \`gateway providers remove ${name}\` from a terminal also deletes that.` : null;
    sendJson(r.res, 200, { name, removed: true, note }, r.headers);
    return true;
  }
  if (action === undefined && method === 'PATCH') {
    const b = await readAdminBody(r.req, patchProviderSchema);
    const updated = await deps.store.providers.update(name, { priority: b.priority });
    await deps.live.reload();
    sendJson(r.res, 200, { name, priority: updated.priority }, r.headers);
    return true;
  }
  if (action === 'refresh' && method === 'POST') {
    r.req.resume();
    sendJson(r.res, 200, await refresh(r, name), r.headers);
    return true;
  }
  if (action === 'test' && method === 'POST') {
    r.req.resume();
    const live = deps.live.providersByName.get(name);
    if (!live) throw notFound(`No provider named "${name}".`);
    const [verdict] = await checkProviders([live.settings], deps.providerKeys, deps.transport, () => [...live.models], "in the gateway's environment");
    sendJson(r.res, 200, verdict, r.headers);
    return true;
  }
  return false;
};
