/** The headers of a response that reached a provider (x-request-id, x-gateway-*). */
import type { RequestContext } from './request-context.ts';

/** Headers of a response that reached a provider; a stream learns its pricing only at the end. */
export function successHeaders(ctx: RequestContext, provider: string, model: string, attempts: number, pricing: string | null): Record<string, string> {
  const h: Record<string, string> = {
    ...ctx.baseHeaders,
    'x-request-id': ctx.requestId,
    'x-gateway-provider': provider,
    'x-gateway-model': model,
    'x-gateway-attempts': String(attempts),
  };
  if (pricing) h['x-gateway-pricing'] = pricing;
  return h;
}
