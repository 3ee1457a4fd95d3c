/**
 * Admission of a model call: the key's model allow-list, model resolution, the key's rate limits and
 * budget. Runs before any provider is contacted; each refusal is a client-facing error.
 */
import { forbidden, modelNotFound, rateLimited } from '../errors.ts';
import type { Strategy } from '../routing/strategy.ts';
import { resolveModel } from './model-router.ts';
import type { Candidate } from './model-router.ts';
import type { RequestContext } from './request-context.ts';

export interface Admission {
  candidates: Candidate[];
  strategy: Strategy;
  /** Settles the budget reservation with the call's real cost (null when nothing was spent). */
  settle: (costUsd: number | null) => void;
}

export interface CallEstimate {
  /**
   * The prompt's tokens, or a function counting them: it is called only when a budget needs the count,
   * since tokenizing is the costliest step of admission (~50 µs per KB of prompt).
   */
  inputTokens: number | (() => number);
  /** The most output the request allows, when it says. */
  maxOutputTokens: number | null;
}

export function admit(ctx: RequestContext, requested: string, estimate: CallEstimate): Admission {
  const { deps, key } = ctx;
  applyRateLimit(ctx);

  const resolution = resolveModel(requested, deps.live);
  if (!resolution) {
    const hint =
      deps.live.providers.length === 0
        ? 'no provider is configured: run `gateway providers add NAME --type openai --key-env OPENAI_API_KEY` (or `gateway start --demo` to try `demo-chat`)'
        : `no configured provider serves it; run \`gateway providers add ...\` or \`gateway providers refresh\`, or \`gateway aliases set ${requested} provider/model\``;
    throw modelNotFound(requested, hint);
  }

  let candidates = resolution.candidates;
  if (key.models && key.models.length > 0) {
    const allowed = new Set(key.models);
    if (!allowed.has(requested)) candidates = candidates.filter((c) => allowed.has(c.model));
    if (candidates.length === 0) {
      throw forbidden(`Key "${key.name}" may not use model \`${requested}\`; it is limited to: ${key.models.join(', ')}.`, 'model_not_allowed');
    }
  }

  let reserveUsd = 0;
  if (key.budgetUsd !== null && key.budgetUsd !== undefined) {
    // A budget only holds if every call it pays for has a price.
    const priced = candidates.filter((c) => deps.prices.lookup(c.runtime.settings.type, c.runtime.settings.preset, c.model));
    if (priced.length === 0) {
      const m = candidates[0].model;
      throw forbidden(
        `Key "${key.name}" has a budget, and model \`${m}\` has no known price, so its cost could not be counted. ` +
          `Set one with \`gateway prices set ${m} --input USD_PER_MTOK --output USD_PER_MTOK\`.`,
        'model_unpriced',
      );
    }
    candidates = priced;
    const price = deps.prices.lookup(priced[0].runtime.settings.type, priced[0].runtime.settings.preset, priced[0].model);
    if (price) {
      const inputTokens = typeof estimate.inputTokens === 'function' ? estimate.inputTokens() : estimate.inputTokens;
      reserveUsd = (inputTokens * price.inputPerMTok + (estimate.maxOutputTokens ?? 0) * price.outputPerMTok) / 1e6;
    }
  }
  const release = deps.budgets.reserve(key, reserveUsd);
  return {
    candidates,
    strategy: resolution.strategy ?? deps.settings.routing.strategy,
    settle: release,
  };
}

function applyRateLimit(ctx: RequestContext): void {
  const { key, deps } = ctx;
  if (!key.rpm && !key.tpm) return;
  const verdict = deps.limiter.check(key.id, { rpm: key.rpm ?? null, tpm: key.tpm ?? null });
  Object.assign(ctx.baseHeaders, verdict.headers);
  if (!verdict.allowed) {
    throw rateLimited(
      `Rate limit reached for key "${key.name}" (${key.rpm ? `${key.rpm} requests` : ''}${key.rpm && key.tpm ? ', ' : ''}${key.tpm ? `${key.tpm} tokens` : ''} per minute). Try again in ${Math.ceil(verdict.retryAfterMs / 1000)}s.`,
      verdict.retryAfterMs / 1000,
      verdict.headers,
    );
  }
}
