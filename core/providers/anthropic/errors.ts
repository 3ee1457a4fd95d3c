import type { ErrorType } from '../../errors.ts';
import { retryAfterMs as headerRetryAfterMs } from '../../routing/failure-policy.ts';
import type { UpstreamFailure } from '../types.ts';

/** Anthropic error type → the HTTP status it comes with (docs.claude.com/en/api/errors), for in-stream errors. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  // 529 is Anthropic-only; OpenAI clients understand overload as 503.
  overloaded_error: 503,
};

const OPENAI_TYPE_BY_TYPE: Record<string, ErrorType> = {
  invalid_request_error: 'invalid_request_error',
  not_found_error: 'invalid_request_error',
  permission_error: 'invalid_request_error',
  conflict_error: 'invalid_request_error',
  request_too_large: 'invalid_request_error',
  authentication_error: 'invalid_api_key',
  billing_error: 'insufficient_quota',
  rate_limit_error: 'rate_limit_exceeded',
  api_error: 'api_error',
  timeout_error: 'api_error',
  overloaded_error: 'api_error',
};

const normaliseStatus = (status: number): number => (status === 529 ? 503 : status);

function typeForStatus(status: number): ErrorType {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 401) return 'invalid_api_key';
  if (status === 402) return 'insufficient_quota';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

interface AnthropicErrorFields {
  type: string | null;
  message: string | null;
}

function readErrorObject(parsed: unknown): AnthropicErrorFields | null {
  if (parsed === null || typeof parsed !== 'object') return null;
  const inner = (parsed as Record<string, unknown>).error;
  if (inner === null || typeof inner !== 'object') return null;
  const e = inner as Record<string, unknown>;
  return {
    type: typeof e.type === 'string' ? e.type : null,
    message: typeof e.message === 'string' ? e.message : null,
  };
}

/** Proxies answer with HTML pages; a tag-free, bounded snippet is enough to tell what happened. */
function snippet(text: string): string {
  const plain = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
}

function failure(status: number, fields: AnthropicErrorFields | null, fallbackMessage: string): UpstreamFailure {
  const code = fields?.type ?? null;
  return {
    status,
    message: fields?.message || fallbackMessage,
    type: (code !== null ? OPENAI_TYPE_BY_TYPE[code] : undefined) ?? typeForStatus(status),
    code,
  };
}

export function parseAnthropicError(
  status: number,
  bodyText: string,
  headers: Record<string, string | string[] | undefined>,
): UpstreamFailure {
  const mapped = normaliseStatus(status);
  let fields: AnthropicErrorFields | null = null;
  try {
    fields = readErrorObject(JSON.parse(bodyText));
  } catch {
    // Not JSON: a proxy page or a truncated body; the snippet below says what there is.
  }
  const fallback = fields ? `Anthropic returned HTTP ${status}` : snippet(bodyText) || `Anthropic returned HTTP ${status} with an empty body`;
  const out = failure(mapped, fields, fallback);
  const retryAfterMs = headerRetryAfterMs(headers);
  if (retryAfterMs !== undefined) out.retryAfterMs = retryAfterMs;
  return out;
}

/** An `event: error` inside a stream has no HTTP status of its own; its error type implies one. */
export function streamErrorFailure(data: string): UpstreamFailure {
  let fields: AnthropicErrorFields | null = null;
  try {
    fields = readErrorObject(JSON.parse(data));
  } catch {
    // handled below
  }
  const status = (fields?.type ? STATUS_BY_TYPE[fields.type] : undefined) ?? 502;
  return failure(status, fields, fields ? 'Anthropic reported an error in the stream' : snippet(data) || 'Anthropic reported an error in the stream');
}
