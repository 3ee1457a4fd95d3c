/** `GET /v1/models` and `GET /v1/models/{model}` (ids may contain `/`, sent percent-encoded). */
import { modelNotFound } from '../errors.ts';
import { resolveModel } from './model-router.ts';
import { sendJson } from './respond.ts';
import type { RequestContext } from './request-context.ts';

/** Listings carry no dates of their own; a fixed one keeps them stable between starts. */
const CREATED = 1_735_689_600;

interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

function visibleModels(ctx: RequestContext): ModelEntry[] {
  const allowed = ctx.key.models && ctx.key.models.length > 0 ? new Set(ctx.key.models) : null;
  const out: ModelEntry[] = [];
  for (const [id, providers] of ctx.deps.live.modelIndex) {
    if (!allowed || allowed.has(id)) out.push({ id, object: 'model', created: CREATED, owned_by: providers[0].settings.name });
  }
  for (const alias of ctx.deps.live.aliases.values()) {
    if (!ctx.deps.live.modelIndex.has(alias.name) && (!allowed || allowed.has(alias.name))) {
      out.push({ id: alias.name, object: 'model', created: CREATED, owned_by: 'gateway-alias' });
    }
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/** Anthropic's list shape (Claude Code's `/model` picker reads `data[].id` and `display_name`). */
function anthropicList(models: ModelEntry[]): Record<string, unknown> {
  const data = models.map((m) => ({ type: 'model', id: m.id, display_name: m.id, created_at: new Date(m.created * 1000).toISOString() }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

export function handleListModels(ctx: RequestContext, anthropic = false): void {
  if (anthropic) {
    sendJson(ctx.res, 200, anthropicList(visibleModels(ctx)), { 'x-request-id': ctx.requestId, 'request-id': ctx.requestId, ...ctx.baseHeaders });
    return;
  }
  sendJson(ctx.res, 200, { object: 'list', data: visibleModels(ctx) }, { 'x-request-id': ctx.requestId, ...ctx.baseHeaders });
}

export function handleGetModel(ctx: RequestContext, rawId: string): void {
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    id = rawId;
  }
  const allowed = ctx.key.models && ctx.key.models.length > 0 ? new Set(ctx.key.models) : null;
  const resolution = !allowed || allowed.has(id) ? resolveModel(id, ctx.deps.live) : null;
  if (!resolution) throw modelNotFound(id);
  const owner = resolution.via === 'alias' ? 'gateway-alias' : resolution.candidates[0].provider;
  sendJson(ctx.res, 200, { id, object: 'model', created: CREATED, owned_by: owner }, { 'x-request-id': ctx.requestId, ...ctx.baseHeaders });
}
