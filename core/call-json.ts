/**
 * The public JSON shape of one audit row: `gateway logs --json` prints it, the admin API serves it.
 * `id` equals the `x-request-id` the client saw.
 */
import type { CallRow } from './storage/audit-writer.ts';
import type { CallAttempt } from './storage/audit-queries.ts';

export interface CallJson {
  id: string;
  time: string;
  key: string | null;
  endpoint: string;
  model_requested: string | null;
  model: string | null;
  provider: string | null;
  status: number;
  error_type: string | null;
  error_message: string | null;
  stream: boolean;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost_usd: number | null;
  /** `priced|estimated|unpriced` for a call that reached a provider; null for one that never did (refused, failed). */
  pricing: string | null;
  price_version: string | null;
  latency_ms: number;
  ttft_ms: number | null;
  attempts: number;
  /** Answered from a cassette: no provider was contacted, nothing was spent. Always set by callToJson; optional for older producers. */
  replayed?: boolean;
  /** The agent's session (Claude Code's `x-claude-code-session-id`, Codex's `session_id` header), when it sent one. */
  session_id?: string | null;
}

export function callToJson(row: Omit<CallRow, 'requestBody' | 'responseBody'>): CallJson {
  return callJsonAt(row, new Date(row.time).toISOString());
}

/** `callToJson` with the caller's own text for the time (the start's per-call line prints its local time). */
export function callJsonAt(row: Omit<CallRow, 'requestBody' | 'responseBody'>, time: string): CallJson {
  return {
    id: row.id,
    time,
    key: row.keyName,
    endpoint: row.endpoint,
    model_requested: row.modelRequested,
    model: row.model,
    provider: row.provider,
    status: row.status,
    error_type: row.errorType,
    error_message: row.errorMessage,
    stream: row.stream,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    cached_tokens: row.cachedTokens,
    cache_write_tokens: row.cacheWriteTokens,
    reasoning_tokens: row.reasoningTokens,
    cost_usd: row.costUsd,
    pricing: row.provider === null ? null : row.pricing,
    price_version: row.priceVersion,
    latency_ms: row.latencyMs,
    ttft_ms: row.ttftMs,
    attempts: row.attempts,
    replayed: row.replayed === true,
    session_id: row.sessionId ?? null,
  };
}

export function callDetailJson(row: CallRow & { attemptList: CallAttempt[] }): CallJson & {
  attempt_list: Array<{ provider: string; model: string; status: number | null; error: string | null; duration_ms: number }>;
  request_body: string | null;
  response_body: string | null;
} {
  return {
    ...callToJson(row),
    attempt_list: row.attemptList.map((a) => ({ provider: a.provider, model: a.model, status: a.status, error: a.error, duration_ms: a.durationMs })),
    request_body: row.requestBody,
    response_body: row.responseBody,
  };
}
