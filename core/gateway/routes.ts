/**
 * The route table of the public API. Paths are matched on the raw URL so percent-encoded model ids
 * (`deepseek-ai%2FDeepSeek-V3`) stay one segment. Dashboard paths answer with and without `/v1`.
 */
export type ModelCallRoute = 'chat' | 'embeddings' | 'completions' | 'images' | 'transcriptions' | 'translations' | 'messages' | 'count-tokens' | 'responses';
export type PlainRoute = 'models' | 'model' | 'balance' | 'user-info' | 'subscription' | 'billing-usage';

export type RouteMatch =
  | { kind: 'call'; route: ModelCallRoute; endpoint: string }
  | { kind: 'plain'; route: PlainRoute; param?: string }
  | { kind: 'admin'; path: string }
  | { kind: 'ui'; path: string }
  | { kind: 'health' }
  | { kind: 'none' };

const CALLS: Record<string, ModelCallRoute> = {
  '/v1/chat/completions': 'chat',
  '/v1/embeddings': 'embeddings',
  '/v1/completions': 'completions',
  '/v1/images/generations': 'images',
  '/v1/audio/transcriptions': 'transcriptions',
  '/v1/audio/translations': 'translations',
  // Anthropic Messages (Claude Code appends `?beta=true`; routes match on the path alone).
  '/v1/messages': 'messages',
  '/v1/messages/count_tokens': 'count-tokens',
  '/v1/responses': 'responses',
};

/** What the public API serves, for the 404 of a path it does not. */
export const SERVED_PATHS = 'POST /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/images/generations, /v1/audio/transcriptions, /v1/audio/translations, /v1/messages, /v1/messages/count_tokens, /v1/responses; GET /v1/models, /v1/models/{model}, /v1/balance';

const PLAIN_GET: Record<string, PlainRoute> = {
  '/v1/models': 'models',
  '/v1/balance': 'balance',
  '/v1/dashboard/user/info': 'user-info',
  '/v1/dashboard/billing/subscription': 'subscription',
  '/v1/dashboard/billing/usage': 'billing-usage',
  '/dashboard/user/info': 'user-info',
  '/dashboard/billing/subscription': 'subscription',
  '/dashboard/billing/usage': 'billing-usage',
  '/balance': 'balance',
};

export function matchRoute(method: string, path: string): RouteMatch {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (method === 'POST' && Object.hasOwn(CALLS, p)) return { kind: 'call', route: CALLS[p], endpoint: p };
  if (method === 'GET' && Object.hasOwn(PLAIN_GET, p)) return { kind: 'plain', route: PLAIN_GET[p] };
  if (method === 'GET' && p.startsWith('/v1/models/') && p.length > '/v1/models/'.length) {
    return { kind: 'plain', route: 'model', param: p.slice('/v1/models/'.length) };
  }
  if (p === '/admin' || p.startsWith('/admin/')) return { kind: 'admin', path: p };
  if (p === '/ui' || p.startsWith('/ui/')) return { kind: 'ui', path: p };
  if (p === '/healthz') return { kind: 'health' };
  return { kind: 'none' };
}

/** Whether a path exists for some other method (405 rather than 404). */
export function pathExists(path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return Object.hasOwn(CALLS, p) || Object.hasOwn(PLAIN_GET, p) || p.startsWith('/v1/models/');
}

/** Whether a path speaks Anthropic Messages (`/v1/messages` and below): its errors and ids take Anthropic's shape. */
export const isAnthropicPath = (path: string): boolean => path === '/v1/messages' || path.startsWith('/v1/messages/');
