/**
 * What one call leaves behind: its cost (from the upstream's own usage, or an estimate) and its
 * audit row. Built up while the request runs and written once, off the hot path, at the end.
 */
import type { ProviderSettings } from '../providers/types.ts';
import { costOf } from '../pricing/cost.ts';
import type { CallRow } from '../storage/audit-writer.ts';
import type { StoredKey } from '../storage/keys-repo.ts';
import { sanitizeUsage } from '../usage.ts';
import type { Usage } from '../usage.ts';
import type { AttemptRecord } from './attempts.ts';
import type { GatewayDeps } from './deps.ts';
import { scrubSecrets } from './scrub.ts';

export type Pricing = 'priced' | 'estimated' | 'unpriced';

export interface Priced {
  costUsd: number | null;
  pricing: Pricing;
  /** What the price came from when it is not the bundled data (`upstream:openrouter`, `user`, `builtin`). */
  source?: string;
}

/**
 * Prices a call's usage. Impossible counts are clamped first (and the call marked `estimated`), so
 * one broken upstream answer cannot poison a key's running spend; an upstream's own cost wins and
 * is recorded as such.
 */
export function priceUsage(deps: GatewayDeps, provider: ProviderSettings, model: string, raw: Usage): Priced {
  const usage = sanitizeUsage(raw);
  const price = deps.prices.lookup(provider.type, provider.preset, model);
  const pricing: Pricing = usage.estimated || usage.clamped ? 'estimated' : 'priced';
  if (usage.upstreamCostUsd !== undefined) return { costUsd: costOf(usage, price ?? UPSTREAM_ONLY), pricing, source: `upstream:${provider.name}` };
  if (!price) return { costUsd: null, pricing: 'unpriced' };
  return { costUsd: costOf(usage, price), pricing, ...(price.source === 'bundled' ? {} : { source: price.source }) };
}

const UPSTREAM_ONLY = { inputPerMTok: 0, outputPerMTok: 0, cacheReadPerMTok: null, cacheWritePerMTok: null, source: 'bundled' as const };

/**
 * The attempts as the `attempts_json` column holds them: what `JSON.stringify` writes for
 * `{provider, model, status, error, duration_ms}` objects, without building those objects (~0.5 µs a call).
 */
export function attemptsJson(attempts: readonly AttemptRecord[]): string {
  let out = '[';
  for (let i = 0; i < attempts.length; i++) {
    const a = attempts[i];
    out += `${i === 0 ? '' : ','}{"provider":${JSON.stringify(a.provider)},"model":${JSON.stringify(a.model)},"status":${jsonNumber(a.status)},"error":${a.error === null ? 'null' : JSON.stringify(a.error)},"duration_ms":${jsonNumber(a.durationMs)}}`;
  }
  return `${out}]`;
}

/** A number as JSON writes it: NaN, Infinity and null become `null`. */
const jsonNumber = (n: number | null): string => (n !== null && Number.isFinite(n) ? String(n) : 'null');

export interface CallRecordInit {
  requestId: string;
  startedAt: number;
  startedPerf: number;
  key: StoredKey | null;
  endpoint: string;
  stream: boolean;
}

export class CallRecord {
  readonly init: CallRecordInit;
  modelRequested: string | null = null;
  model: string | null = null;
  provider: string | null = null;
  attempts: AttemptRecord[] = [];
  #usage: Usage | null = null;
  priced: Priced = { costUsd: null, pricing: 'unpriced' };
  ttftMs: number | null = null;
  requestBody: string | null = null;
  /** The client's bytes, for a request body large enough to be cut (server.ts, `recordRequestBody`); `requestBody` is then null. */
  requestBytes: Uint8Array | null = null;
  /** The body's whole length, when `requestBytes` holds only the start the audit row can keep. */
  requestBytesTotal: number | null = null;
  responseBody: string | null = null;
  /** The most output tokens the call may report before the count counts as impossible (see run-call.ts); null: no bound. */
  outputCeiling: number | null = null;
  secrets: Array<string | null> = [];
  /** Set by a handler whose response already went out but ended badly (an error event mid-stream). */
  outcome: { status: number; errorType: string | null; errorMessage: string | null } | null = null;

  key: StoredKey | null;
  stream: boolean;
  /** The client's `user-agent`, and Claude Code's session id (`x-claude-code-session-id`), when sent. */
  userAgent: string | null = null;
  sessionId: string | null = null;

  /** The call's usage, clamped to sane counts whatever the upstream said. */
  get usage(): Usage | null {
    return this.#usage;
  }
  set usage(u: Usage | null) {
    this.#usage = u === null ? null : sanitizeUsage(u, this.outputCeiling);
  }

  constructor(init: CallRecordInit) {
    this.init = init;
    this.key = init.key;
    this.stream = init.stream;
  }

  /** Notes the attempt that answered: who served the call, after how many tries, with which secret (scrubbed later). */
  servedBy(s: { attempts: AttemptRecord[]; candidate: { provider: string; model: string }; apiKey: string | null }): void {
    this.attempts = s.attempts;
    this.provider = s.candidate.provider;
    this.model = s.candidate.model;
    this.secrets.push(s.apiKey);
  }

  elapsedMs(): number {
    return Math.round(performance.now() - this.init.startedPerf);
  }

  toRow(status: number, errorType: string | null, errorMessage: string | null, storeBodies: boolean, priceVersion: string): CallRow {
    const u = this.usage;
    const scrub = (t: string | null) => (t === null ? null : scrubSecrets(t, this.secrets));
    return {
      id: this.init.requestId,
      time: this.init.startedAt,
      keyId: this.key?.id ?? null,
      keyName: this.key?.name ?? null,
      endpoint: this.init.endpoint,
      modelRequested: this.modelRequested,
      model: this.model,
      provider: this.provider,
      status,
      errorType,
      errorMessage: scrub(errorMessage),
      stream: this.stream,
      inputTokens: u?.inputTokens ?? 0,
      outputTokens: u?.outputTokens ?? 0,
      cachedTokens: u?.cacheReadTokens ?? 0,
      cacheWriteTokens: u?.cacheWriteTokens ?? 0,
      reasoningTokens: u?.reasoningTokens ?? 0,
      costUsd: this.priced.costUsd,
      pricing: this.priced.pricing,
      // Null for a call that never had usage (refused, failed): its `pricing` means nothing then.
      priceVersion: this.usage || this.priced.costUsd !== null ? (this.priced.source === undefined ? priceVersion : this.priced.source === 'user' ? 'user' : `${this.priced.source}${this.priced.source === 'builtin' ? `+${priceVersion}` : ''}`) : null,
      latencyMs: this.elapsedMs(),
      ttftMs: this.ttftMs,
      attempts: this.attempts.length,
      attemptsJson: attemptsJson(this.attempts),
      userAgent: this.userAgent,
      sessionId: this.sessionId,
      // Raw: the audit writer cuts and scrubs them off the request thread (`bodySecrets`). Every row has the
      // same keys (unset ones undefined), not spreads of optional ones: one shape for what reads rows after.
      requestBody: storeBodies ? this.requestBody : null,
      requestBytes: storeBodies && this.requestBytes ? this.requestBytes : undefined,
      requestBytesTotal: storeBodies && this.requestBytes && this.requestBytesTotal !== null ? this.requestBytesTotal : undefined,
      responseBody: storeBodies ? this.responseBody : null,
      bodySecrets: storeBodies ? secretList(this.secrets) : undefined,
    };
  }
}

/** The last secret list handed out, reused while calls use the same key (below). */
let lastSecret: string | null = null;
let lastList: readonly string[] = [];
const NO_SECRETS: readonly string[] = [];

/**
 * The secrets a row's bodies are scrubbed of. Calls served with the same one key get the same array: rows cross
 * to the audit thread in batches, and the same array in a batch is written once and read back once.
 */
function secretList(secrets: ReadonlyArray<string | null>): readonly string[] {
  if (secrets.length === 1) {
    const s = secrets[0];
    if (s === null) return NO_SECRETS;
    if (s !== lastSecret) {
      lastSecret = s;
      lastList = [s];
    }
    return lastList;
  }
  return secrets.filter((s): s is string => typeof s === 'string');
}
