/**
 * The one error type of the gateway. It knows the HTTP response it becomes (status, OpenAI `type`,
 * `code`, `param`, extra headers) and whether a client retry could help, so every layer can throw it
 * and the HTTP edge only has to serialise it.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'invalid_api_key'
  | 'insufficient_quota'
  | 'rate_limit_exceeded'
  | 'api_error';

export interface GatewayErrorInit {
  status: number;
  type: ErrorType;
  code: string | null;
  message: string;
  param?: string | null;
  headers?: Record<string, string>;
  /** Whether the client may usefully retry; `false` adds `x-should-retry: false`. */
  retryable?: boolean;
  /** An upstream's own error answer, for a front end of the same protocol to pass on verbatim. */
  upstream?: UpstreamErrorBody;
  /**
   * The service is overloaded or unreachable, not broken: every provider tried was (503, Anthropic's 529, no
   * connection). A protocol with its own answer for that (Anthropic's 529 `overloaded_error`) gives it.
   */
  overloaded?: boolean;
}

export interface UpstreamErrorBody {
  /** The wire protocol of the upstream that answered (e.g. 'anthropic-messages'). */
  protocol: string;
  status: number;
  body: string;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  readonly retryable: boolean | undefined;
  readonly upstream: UpstreamErrorBody | undefined;
  readonly overloaded: boolean;

  constructor(init: GatewayErrorInit) {
    super(init.message);
    this.name = 'GatewayError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.headers = init.headers ?? {};
    this.retryable = init.retryable;
    this.upstream = init.upstream;
    this.overloaded = init.overloaded === true;
  }

  toBody(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  responseHeaders(): Record<string, string> {
    const h: Record<string, string> = { ...this.headers };
    if (this.retryable === false) h['x-should-retry'] = 'false';
    return h;
  }
}

export const badRequest = (message: string, code: string, param: string | null = null): GatewayError =>
  new GatewayError({ status: 400, type: 'invalid_request_error', code, message, param });

/** Not worth a retry: Claude Code retried a wrong key for three minutes, silently, before saying so. */
export const invalidApiKey = (message: string): GatewayError =>
  new GatewayError({ status: 401, type: 'invalid_api_key', code: 'invalid_api_key', message, retryable: false });

export const insufficientQuota = (message: string): GatewayError =>
  new GatewayError({ status: 402, type: 'insufficient_quota', code: 'insufficient_quota', message, retryable: false });

export const forbidden = (message: string, code: string): GatewayError =>
  new GatewayError({ status: 403, type: 'invalid_request_error', code, message });

export const modelNotFound = (model: string, hint?: string): GatewayError =>
  new GatewayError({
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: `The model \`${model}\` does not exist or no provider serves it${hint ? `: ${hint}` : '.'}`,
  });

export const notFound = (message: string): GatewayError =>
  new GatewayError({ status: 404, type: 'invalid_request_error', code: 'not_found', message });

export const requestTooLarge = (limitBytes: number): GatewayError =>
  new GatewayError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `Request body is larger than the limit of ${limitBytes} bytes.`,
  });

export const rateLimited = (message: string, retryAfterSeconds: number, extra: Record<string, string> = {}): GatewayError =>
  new GatewayError({
    status: 429,
    type: 'rate_limit_exceeded',
    code: 'rate_limit_exceeded',
    message,
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))), ...extra },
  });

export const internalError = (message = 'Internal gateway error.'): GatewayError =>
  new GatewayError({ status: 500, type: 'api_error', code: 'internal_error', message });

/**
 * `overloaded`: every provider was overloaded or unreachable. `needsOperator`: every provider refused its own
 * key (or had none), which no retry mends. `providerTimeout`: the last provider went silent past its deadline
 * (not the gateway's own pool being full).
 */
export const upstreamError = (message: string, opts: { timeout?: boolean; providerTimeout?: boolean; attempts: number; overloaded?: boolean; needsOperator?: boolean }): GatewayError =>
  new GatewayError({
    status: opts.timeout ? 504 : 502,
    type: 'api_error',
    code: opts.timeout ? 'upstream_timeout' : 'upstream_error',
    message,
    // The SDKs would repeat the whole chain twice more; once we tried twice ourselves, say no. Nor after a timeout:
    // each retry would wait the whole deadline again (minutes) with no byte.
    retryable: opts.attempts >= 2 || opts.needsOperator === true || opts.providerTimeout === true ? false : undefined,
    overloaded: opts.overloaded === true,
  });

export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return internalError();
}
