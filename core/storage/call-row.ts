/** One call as the server reports it to the audit log: what every audit sink (SQLite, PostgreSQL) stores. */
export type Pricing = 'priced' | 'estimated' | 'unpriced';

/** One call, as the server reports it; each field maps to the `calls` column of the same name in snake_case. */
export interface CallRow {
  /** The x-request-id. */
  id: string;
  /** Unix ms when the request arrived. */
  time: number;
  /** Null when the request carried no valid key. */
  keyId: string | null;
  keyName: string | null;
  endpoint: string;
  modelRequested: string | null;
  /** The resolved model, as the provider names it. */
  model: string | null;
  provider: string | null;
  status: number;
  errorType: string | null;
  errorMessage: string | null;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  costUsd: number | null;
  pricing: Pricing;
  /** Version of the price data the cost came from. */
  priceVersion: string | null;
  latencyMs: number;
  /** Time to first token, for streams. */
  ttftMs: number | null;
  /** How many upstream attempts were made (`x-gateway-attempts`). */
  attempts: number;
  /**
   * Each attempt in order, as a JSON array of `{provider, model, status, error, duration_ms}` (see
   * `CallAttempt`). Serialised by the caller; stored as given.
   */
  attemptsJson: string;
  /** Already redacted by the caller (unless `bodySecrets` is set); capped to `maxBodyBytes` here. */
  requestBody: string | null;
  /**
   * A large request body as the client sent it (UTF-8), set instead of `requestBody`: the audit writer cuts and
   * stores bytes without measuring and encoding the text again (~30 µs at 100 KB on its thread). The row owns
   * this view and its whole `ArrayBuffer`: the threaded writer moves that buffer to the audit thread instead of
   * copying it, and the view is empty here afterwards.
   */
  requestBytes?: Uint8Array;
  /**
   * The request body's whole length when `requestBytes` holds only its start: of a body over the cap, only the
   * part that can be stored crosses to the audit thread (a 100 KB prompt was copied there whole, twice).
   */
  requestBytesTotal?: number;
  responseBody: string | null;
  /**
   * Set when the bodies come raw: the writer cuts them to `MAX_BODY_BYTES`, removes these secrets and
   * key-shaped text from them, and caps them. Scrubbing a 100 KB prompt cost ~300 µs; done here, it runs
   * on the audit thread, not the request thread. Never stored, never shown.
   */
  bodySecrets?: readonly string[];
  /** The client's `user-agent` header, when sent. */
  userAgent?: string | null;
  /** Claude Code's `x-claude-code-session-id`, when sent. */
  sessionId?: string | null;
  /** Answered from a cassette, without contacting a provider (absent means false). */
  replayed?: boolean;
}
