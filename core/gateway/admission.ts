/**
 * Admission of a model call: the key's model allow-list, model resolution, the key's rate limits and
 * budget. Runs before any provider is contacted; each refusal is a client-facing error.
 *
 * Worst case first: the call's budget reservation is what it can cost at most (prompt estimate plus
 * output at `max_tokens`, else the model's own output limit, times `n`; audio and images by their own
 * units), over every candidate it may fail over to. The TPM window holds the same token count. Both
 * settle to what the call really used when it ends (`settle`).
 */
import { forbidden, modelNotFound, rateLimited } from '../errors.ts';
import type { ModelPrice } from '../pricing/price.ts';
import { worstCaseUsd } from '../pricing/worst-case.ts';
import { modelOutputLimit } from '../pricing/output-limits.ts';
import type { Strategy } from '../routing/strategy.ts';
import { resolveModel } from './model-router.ts';
import type { Candidate } from './model-router.ts';
import type { RequestContext } from './request-context.ts';
import { isPromise, andThen, type Awaitable } from '../state/awaitable.ts';
import type { RateDecision } from '../state/rate-windows.ts';

export interface Admission {
  candidates: Candidate[];
  strategy: Strategy;
  /** Settles the budget reservation with the call's real cost (null when nothing was spent) and frees its TPM hold. */
  settle: (costUsd: number | null) => void;
}

export interface CallEstimate {
  /**
   * The prompt's tokens, or a counter of them: asked only when a budget or a TPM limit needs the count,
   * since tokenizing is the costliest step of admission (~50 µs per KB of prompt).
   */
  inputTokens: number | { now(): number };
  /** The most output one choice may produce, when the request says; null: the model's own limit. */
  maxOutputTokens: number | null;
  /** Choices asked for (`n`); output counts once per choice. */
  n?: number;
  /** The worst case of a call not priced by tokens (audio minutes, images), given the model's price. */
  unitWorstCase?: (price: ModelPrice, model: string) => number | null;
  /** The `service_tier` the request asks for (`priority` is billed higher). */
  serviceTier?: string;
  /** Tokens the TPM window should hold for a call without token output (audio: its estimated audio tokens). */
  extraTokens?: number;
}

/**
 * Synchronous where every counter answers at once (one process: SQLite and memory); a promise where a
 * counter lives elsewhere (a team's Redis). Callers: `let a = admit(...); if (isPromise(a)) a = await a;`.
 */
export function admit(ctx: RequestContext, requested: string, estimate: CallEstimate): Awaitable<Admission> {
  const { deps, key } = ctx;
  const resolution = resolveModel(requested, deps.live);
  if (!resolution) {
    const alias = deps.live.aliases.get(requested);
    const hint =
      deps.live.providers.length === 0
        ? 'no provider is configured: run `gateway providers add NAME --type openai --key-env OPENAI_API_KEY` (or `gateway start --demo` to try `demo-chat`)'
        : alias
          ? `it is an alias for ${alias.targets.map((t) => `${t.provider}/${t.model}`).join(', ')}, and none of those providers is configured; run \`gateway aliases set ${requested} provider/model\``
          : `no configured provider serves it; run \`gateway providers add ...\` or \`gateway providers refresh\`, or \`gateway aliases set ${requested} provider/model\``;
    return refuseAfterCounting(ctx, () => modelNotFound(requested, hint));
  }

  let candidates = resolution.candidates;
  if (key.models && key.models.length > 0) {
    const allowed = new Set(key.models);
    if (!allowed.has(requested)) candidates = candidates.filter((c) => allowed.has(c.model));
    if (candidates.length === 0) {
      const message = `Key "${key.name}" may not use model \`${requested}\`; it is limited to: ${key.models.join(', ')}.`;
      return refuseAfterCounting(ctx, () => forbidden(message, 'model_not_allowed'));
    }
  }

  const n = estimate.n !== undefined && Number.isFinite(estimate.n) && estimate.n > 1 ? Math.floor(estimate.n) : 1;
  let prompt: number | null = null;
  const promptTokens = (): number => (prompt ??= Math.ceil(typeof estimate.inputTokens === 'number' ? estimate.inputTokens : estimate.inputTokens.now()));
  const outputLimit = (price: ModelPrice | null, model: string): number => {
    // An echoing model (the demo) cannot say more than its prompt, whatever max_tokens allows.
    if (price?.echoOverheadTokens != null) return Math.min(estimate.maxOutputTokens ?? Infinity, promptTokens() + price.echoOverheadTokens);
    return estimate.maxOutputTokens ?? price?.maxOutputTokens ?? modelOutputLimit(model);
  };

  const hasBudget = key.budgetUsd !== null && key.budgetUsd !== undefined;
  let worstUsd = 0;
  let priceForHint: { price: ModelPrice; model: string } | null = null;
  if (hasBudget) {
    // A budget only holds if every call it pays for has a price.
    const priced: Candidate[] = [];
    for (const c of candidates) {
      const price = deps.prices.lookup(c.runtime.settings.type, c.runtime.settings.preset, c.model);
      if (!price) continue;
      priced.push(c);
      const worst = estimate.unitWorstCase?.(price, c.model) ?? worstCaseUsd(price, promptTokens(), outputLimit(price, c.model), n, estimate.serviceTier);
      if (worst >= worstUsd) {
        worstUsd = worst;
        priceForHint = { price, model: c.model };
      }
    }
    if (priced.length === 0) {
      const m = candidates[0].model;
      return refuseAfterCounting(ctx, () => forbidden(
        `Key "${key.name}" has a budget, and model \`${m}\` has no known price, so its cost could not be counted. ` +
          `Set one with \`gateway prices set ${m} --input USD_PER_MTOK --output USD_PER_MTOK\` (audio: --per-minute, images: --per-image).`,
        'model_unpriced',
      ));
    }
    candidates = priced;
  }

  const tpmTokens = key.tpm ? promptTokens() + (estimate.extraTokens ?? 0) + n * outputLimit(null, candidates[0].model) : 0;
  const strategy = resolution.strategy ?? deps.settings.routing.strategy;
  const admitted = candidates;
  return andThen(applyRateLimit(ctx, tpmTokens), (tpmRelease) => {
    const settled = (release: (cost: number | null) => void): Admission => ({
      candidates: admitted,
      strategy,
      settle: (cost) => {
        release(cost);
        tpmRelease();
      },
    });
    let reserved: Awaitable<(cost: number | null) => void>;
    try {
      reserved = deps.budgets.reserve(key, worstUsd, () => fitHint(priceForHint, promptTokens(), n, estimate));
    } catch (err) {
      tpmRelease();
      throw err;
    }
    if (!isPromise(reserved)) return settled(reserved);
    return reserved.then(settled, (err: unknown) => {
      tpmRelease();
      throw err;
    });
  });
}

/** A refused call still counts against the key's RPM (so a refusal loop cannot hammer the gateway). */
function refuseAfterCounting(ctx: RequestContext, refusal: () => Error): Awaitable<never> {
  return andThen(applyRateLimit(ctx, 0), () => {
    throw refusal();
  });
}

/**
 * Admission of a replay (an answer from a cassette): the key's model allow-list (the model asked for, or the
 * one that served the recording) and its requests-per-minute limit hold as for a live call. A replay spends
 * nothing and no provider serves tokens for it, so neither the budget nor the tokens-per-minute window is
 * charged: a spent key keeps replaying its tests offline.
 */
export function admitReplay(ctx: RequestContext, requested: string | null, served: string | null): Awaitable<() => void> {
  const { key } = ctx;
  if (key.models && key.models.length > 0 && !key.models.includes(requested ?? '') && !(served !== null && key.models.includes(served))) {
    const message = `Key "${key.name}" may not use model \`${requested ?? ''}\`; it is limited to: ${key.models.join(', ')}.`;
    return refuseAfterCounting(ctx, () => forbidden(message, 'model_not_allowed'));
  }
  return applyRateLimit(ctx, 0);
}

/** What the client can do when the worst case does not fit: the largest `max_tokens` that would. */
function fitHint(p: { price: ModelPrice; model: string } | null, prompt: number, n: number, estimate: CallEstimate): (remainingUsd: number) => string {
  return (remaining) => {
    if (p === null || estimate.unitWorstCase) return '';
    const promptUsd = worstCaseUsd(p.price, prompt, 0, 1);
    const perToken = (worstCaseUsd(p.price, prompt, 1_000_000, 1) - promptUsd) / 1_000_000;
    const fits = perToken > 0 ? Math.floor((remaining - promptUsd) / (perToken * n)) : 0;
    return fits >= 1 ? ` Set max_tokens to ${fits} or less to fit what remains.` : '';
  };
}

/** Applies the key's RPM/TPM, holding `tokens` in the TPM window; gives the function that frees them. */
function applyRateLimit(ctx: RequestContext, tokens: number): Awaitable<() => void> {
  const { key, deps } = ctx;
  if (!key.rpm && !key.tpm) return noRelease;
  return andThen(deps.limiter.check(key.id, { rpm: key.rpm ?? null, tpm: key.tpm ?? null }, tokens), (verdict) => limitVerdict(ctx, tokens, verdict));
}

const noRelease = (): void => undefined;

function limitVerdict(ctx: RequestContext, tokens: number, verdict: RateDecision): () => void {
  const { key, deps } = ctx;
  Object.assign(ctx.baseHeaders, verdict.headers);
  if (!verdict.allowed) {
    throw rateLimited(
      `Rate limit reached for key "${key.name}" (${key.rpm ? `${key.rpm} requests` : ''}${key.rpm && key.tpm ? ', ' : ''}${key.tpm ? `${key.tpm} tokens` : ''} per minute` +
        `${tokens > 0 && key.tpm ? `; this call holds up to ${Math.min(tokens, key.tpm)} tokens until it ends (prompt plus max_tokens times n)` : ''}). Try again in ${Math.ceil(verdict.retryAfterMs / 1000)}s.`,
      verdict.retryAfterMs / 1000,
      verdict.headers,
    );
  }
  const reservation = verdict.reservation;
  return () => deps.limiter.release(reservation);
}
