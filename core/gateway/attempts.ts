/**
 * Runs a call against its candidates in routing order until one succeeds. Each attempt is recorded
 * (provider, status, error, duration). Failures that a client caused (other 4xx) go straight back;
 * the rest fail over. When every candidate failed, one error names each attempt.
 */
import { GatewayError, rateLimited, upstreamError } from '../errors.ts';
import { classifyFailure } from '../routing/failure-policy.ts';
import { orderCandidates } from '../routing/strategy.ts';
import { planAttempts } from '../routing/backoff.ts';
import type { Strategy } from '../routing/strategy.ts';
import type { UpstreamFailure } from '../providers/types.ts';
import type { TransportFailureKind } from '../upstream/transport.ts';
import { isPromise } from '../state/awaitable.ts';
import type { GatewayDeps } from './deps.ts';
import type { Candidate } from './model-router.ts';
import { scrubSecrets } from './scrub.ts';

export interface AttemptRecord {
  provider: string;
  model: string;
  /** The upstream HTTP status, or null when no HTTP answer came (connection error, timeout, reset, no key). */
  status: number | null;
  error: string | null;
  durationMs: number;
}

export type AttemptFailure =
  | { kind: 'http'; failure: UpstreamFailure }
  /** `local`: the gateway's own connection pool was full (no provider was reached): a later retry may well pass. */
  | { kind: Exclude<TransportFailureKind, 'aborted'>; message: string; local?: boolean }
  | { kind: 'no-key'; message: string };

export type AttemptOutcome<T> = { ok: true; value: T } | { ok: false; failure: AttemptFailure };

/** The attempt a client left in the middle of: its provider had the request, so the prompt is billed. */
export interface AttemptInFlight {
  candidate: Candidate;
  apiKey: string | null;
  /** Every attempt made, the one cut last. */
  attempts: AttemptRecord[];
}

/** The client went away; nothing is sent back. */
export class ClientGone extends Error {
  /** Set when the client left while a provider was working on the call. */
  readonly inFlight: AttemptInFlight | null;
  constructor(inFlight: AttemptInFlight | null = null) {
    super('client closed the connection');
    this.name = 'ClientGone';
    this.inFlight = inFlight;
  }
}

export interface AttemptSuccess<T> {
  value: T;
  candidate: Candidate;
  apiKey: string | null;
  attempts: AttemptRecord[];
}

export class AttemptsFailed extends Error {
  readonly error: GatewayError;
  readonly attempts: AttemptRecord[];
  constructor(error: GatewayError, attempts: AttemptRecord[]) {
    super(error.message);
    this.error = error;
    this.attempts = attempts;
  }
}

const describe = (f: AttemptFailure): string => {
  if (f.kind === 'http' && (f.failure.status === 401 || f.failure.status === 403)) {
    // The provider refused ITS key (the client's key is fine): say so in plain words.
    return `HTTP ${f.failure.status}: the provider rejected its API key (${f.failure.message})`;
  }
  if (f.kind === 'http') return `HTTP ${f.failure.status}: ${f.failure.message}`;
  return f.message;
};

const statusOf = (f: AttemptFailure): number | null => (f.kind === 'http' ? f.failure.status : null);

/** The status a client sees for an upstream 4xx that is its own mistake. Never 409 (the SDKs retry it). */
function clientStatus(status: number): number {
  return status === 409 ? 400 : status;
}

const ONE: readonly string[] = ['0'];

export async function runAttempts<T>(
  deps: GatewayDeps,
  candidates: Candidate[],
  strategy: Strategy,
  attempt: (c: Candidate, apiKey: string | null) => Promise<AttemptOutcome<T>>,
  isClientGone: () => boolean,
): Promise<AttemptSuccess<T>> {
  const { breaker } = deps;
  // One candidate (most calls) has nothing to order: no closures, sorting or health split per call.
  let ordered = candidates.length === 1 ? candidates : orderCandidates(candidates, strategy, {
    priceOf: (c) => {
      const p = deps.prices.lookup(c.runtime.settings.type, c.runtime.settings.preset, c.model);
      return p ? p.inputPerMTok + p.outputPerMTok : null;
    },
    latencyOf: (c) => deps.latency.estimate(c.provider, c.model),
    breaker,
  });
  // Health counts: providers whose breaker is open sit out while a healthy one remains.
  const healthy = ordered.filter((c) => breaker.isAvailable(c.provider));
  if (healthy.length > 0) ordered = healthy;

  const plan = planAttempts(
    ordered.length === 1 ? ONE : ordered.map((_, i) => String(i)),
    // The same provider is retried after 0.5 s (the SDKs' own first wait): a blip outlasted a retry 100 ms later,
    // and the answer after two attempts says not to retry (Claude Code then stopped its task at once).
    { maxAttempts: deps.settings.routing.maxAttempts, sameProviderRetries: 1, backoff: { baseMs: 500 } },
  );
  const attempts: AttemptRecord[] = [];
  const failures: Array<{ c: Candidate; f: AttemptFailure }> = [];
  let lastNotFound: GatewayError | null = null;

  for (let planned = plan.next(); planned !== null; planned = plan.next()) {
    const c = ordered[Number(planned.provider)];
    if (planned.delayMs > 0) await sleep(planned.delayMs);
    if (isClientGone()) throw new ClientGone();
    if (!breaker.canAttempt(c.provider) && healthy.length > 0) {
      // Another request holds this provider's probe; do not pile on.
      plan.failed({ retrySame: false });
      continue;
    }

    const started = performance.now();
    const pendingKey = deps.providerKeys.keyFor(c.runtime.settings);
    // An env var's key is there at once: no promise, no microtask, on every call.
    const apiKey = isPromise(pendingKey) ? await pendingKey.catch(() => null) : pendingKey;
    let outcome: AttemptOutcome<T>;
    try {
      if (c.runtime.settings.keySource !== 'none' && !apiKey) {
        const where = deps.providerKeys.missingKeyReason(c.runtime.settings);
        outcome = { ok: false, failure: { kind: 'no-key', message: `provider ${c.provider} has no key (${where})` } };
      } else {
        outcome = await attempt(c, apiKey);
      }
    } catch (err) {
      breaker.onNeutral(c.provider);
      if (err instanceof ClientGone && err.inFlight === null) {
        const cut = { provider: c.provider, model: c.model, status: null, error: 'the client closed the connection', durationMs: Math.round(performance.now() - started) };
        throw new ClientGone({ candidate: c, apiKey, attempts: [...attempts, cut] });
      }
      throw err;
    }
    const durationMs = Math.round(performance.now() - started);
    if (outcome.ok) {
      attempts.push({ provider: c.provider, model: c.model, status: 200, error: null, durationMs });
      breaker.onSuccess(c.provider);
      // Feeds `fastest`: a stream's attempt ends at its first good chunk (time to first token), a
      // non-stream one when the whole answer is read (total latency).
      deps.latency.record(c.provider, c.model, durationMs);
      return { value: outcome.value, candidate: c, apiKey, attempts };
    }
    const f = outcome.failure;
    const message = scrubSecrets(describe(f), [apiKey]);
    attempts.push({ provider: c.provider, model: c.model, status: statusOf(f), error: message, durationMs });
    const verdict =
      f.kind === 'http'
        ? classifyFailure({ kind: 'http', status: outOfCredit(f) ? 402 : f.failure.status })
        : f.kind === 'no-key'
          ? { failover: true, countsAgainstHealth: false, retrySame: false }
          : classifyFailure({ kind: f.kind });
    if (verdict.countsAgainstHealth) breaker.onFailure(c.provider);
    else breaker.onNeutral(c.provider);
    if (isClientGone()) throw new ClientGone();
    if (f.kind === 'http' && !verdict.failover) throw new AttemptsFailed(clientError(f.failure, c, apiKey, attempts.length), attempts);
    // A 404 fails over (the failure policy); kept, it is the client's answer if every provider gives one.
    if (f.kind === 'http' && f.failure.status === 404) lastNotFound = clientError(f.failure, c, apiKey, attempts.length);
    plan.failed({ retrySame: verdict.retrySame, retryAfterMs: f.kind === 'http' ? f.failure.retryAfterMs : undefined });
    failures.push({ c, f });
  }

  if (lastNotFound !== null && failures.every((x) => x.f.kind === 'http' && x.f.failure.status === 404)) {
    lastNotFound.headers['x-gateway-attempts'] = String(attempts.length);
    throw new AttemptsFailed(lastNotFound, attempts);
  }

  const error = finalError(failures, attempts);
  // Every response that reached a provider says how many attempts it took and, as for an answer, which
  // provider and model it reached (here the last one tried), failures included.
  const last = attempts[attempts.length - 1];
  if (last !== undefined) {
    error.headers['x-gateway-provider'] = last.provider;
    error.headers['x-gateway-model'] = last.model;
    error.headers['x-gateway-attempts'] = String(attempts.length);
  }
  throw new AttemptsFailed(error, attempts);
}

/** An upstream's answer that is the client's to see (a 400, or a 404 every provider gave), in the client's terms. */
function clientError(uf: UpstreamFailure, c: Candidate, apiKey: string | null, attempts: number): GatewayError {
  return new GatewayError({
    status: clientStatus(uf.status),
    type: 'invalid_request_error',
    code: uf.code,
    param: uf.param ?? null,
    message: scrubSecrets(uf.message, [apiKey]),
    headers: { 'x-gateway-provider': c.provider, 'x-gateway-model': c.model, 'x-gateway-attempts': String(attempts) },
    ...(uf.body !== undefined ? { upstream: { protocol: c.runtime.adapter.protocol, status: clientStatus(uf.status), body: scrubSecrets(uf.body, [apiKey]) } } : {}),
  });
}

/** The longest wait a 429 passes on: a day (a provider's quota window); beyond it a value is an upstream's bug. */
const MAX_WAIT_MS = 86_400_000;

/**
 * A provider's account out of credit, whatever its status (OpenAI sends 429 `insufficient_quota`): its owner must
 * act, so it is no rate limit to wait out, and the client is not told to retry.
 */
const outOfCredit = (f: AttemptFailure): boolean => f.kind === 'http' && (f.failure.status === 402 || f.failure.code === 'insufficient_quota');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function finalError(failures: Array<{ c: Candidate; f: AttemptFailure }>, attempts: AttemptRecord[]): GatewayError {
  if (failures.length === 0) {
    return upstreamError('No provider could be tried for this model.', { attempts: 0 });
  }
  const summary = attempts.map((a) => `${a.provider}: ${a.error}`).join('; ');
  const allRateLimited = failures.every((x) => x.f.kind === 'http' && x.f.failure.status === 429 && !outOfCredit(x.f));
  if (allRateLimited) {
    const waits = failures.map((x) => (x.f.kind === 'http' ? x.f.failure.retryAfterMs : undefined)).filter((w): w is number => w !== undefined);
    // Both headers say the same wait, within reason: an upstream's 0 read as 1 s in one and 0 in the other, and
    // an absurd one (1e23 ms) went out as it came.
    const waitMs = Math.min(MAX_WAIT_MS, Math.max(1000, Math.ceil((waits.length > 0 ? Math.min(...waits) : 1000) / 1000) * 1000));
    return rateLimited(`Every provider for this model is rate-limited (${summary}).`, waitMs / 1000, { 'retry-after-ms': String(waitMs) });
  }
  const last = failures[failures.length - 1].f;
  const timeout = last.kind === 'timeout';
  // A provider that timed out is not worth the client's retry; a wait for the gateway's own full pool is.
  const providerTimeout = last.kind === 'timeout' && last.local !== true;
  const n = attempts.length;
  const overloaded = failures.every((x) => x.f.kind === 'connect' || (x.f.kind === 'http' && x.f.failure.status === 503));
  const needsOperator = failures.every((x) => x.f.kind === 'no-key' || outOfCredit(x.f) || (x.f.kind === 'http' && (x.f.failure.status === 401 || x.f.failure.status === 403)));
  return upstreamError(`${n === 1 ? 'The provider' : `All ${n} attempts`} failed: ${summary}`, { timeout, providerTimeout, attempts: n, overloaded, needsOperator });
}
