/**
 * Gemini errors: upstream failures (HTTP error bodies and in-stream `error` events) and the inputs
 * this adapter cannot translate.
 */
import { GatewayError, type ErrorType } from '../../errors.ts';
import { retryAfterMs as headerRetryAfterMs } from '../../routing/failure-policy.ts';
import type { UpstreamFailure } from '../types.ts';
import type { GeminiErrorBody } from './wire.ts';

type Headers = Record<string, string | string[] | undefined>;

/**
 * A request Gemini cannot express (token-array embedding inputs, `file_id` parts, custom tools...).
 * It is a GatewayError so that, thrown from a request mapping, it reaches the client as a 400.
 */
export class UnsupportedInputError extends GatewayError {
  constructor(message: string, param: string | null = null) {
    super({ status: 400, type: 'invalid_request_error', code: 'unsupported_input', message, param });
    this.name = 'UnsupportedInputError';
  }
}

/** google.rpc canonical status → OpenAI error type. */
const TYPE_BY_STATUS: Record<string, ErrorType> = {
  INVALID_ARGUMENT: 'invalid_request_error',
  FAILED_PRECONDITION: 'invalid_request_error',
  OUT_OF_RANGE: 'invalid_request_error',
  NOT_FOUND: 'invalid_request_error',
  ALREADY_EXISTS: 'invalid_request_error',
  RESOURCE_EXHAUSTED: 'rate_limit_exceeded',
  UNAUTHENTICATED: 'invalid_api_key',
  // Gemini's 403s are about the key (API not enabled, key restricted, no key sent).
  PERMISSION_DENIED: 'invalid_api_key',
};

function typeForHttpStatus(status: number): ErrorType {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 401 || status === 403) return 'invalid_api_key';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The `error` object of a body; the non-SSE stream endpoint wraps it in a one-element array. */
function readErrorBody(parsed: unknown): GeminiErrorBody | null {
  const root = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!isObj(root) || !isObj(root.error)) return null;
  const e = root.error;
  return {
    code: typeof e.code === 'number' ? e.code : undefined,
    message: typeof e.message === 'string' ? e.message : undefined,
    status: typeof e.status === 'string' ? e.status : undefined,
    details: Array.isArray(e.details) ? e.details.filter(isObj) : undefined,
  };
}

/**
 * Gemini answers a wrong or expired key with 400 INVALID_ARGUMENT ("API key not valid. Please pass a
 * valid API key.", detail reason `API_KEY_INVALID`). Left as a 400 the gateway would hand the client
 * a "bad request" its own key has nothing to do with; as a 401 it counts as a provider failure and
 * the gateway fails over, as it does for other providers' key errors.
 */
function isBadApiKey(e: GeminiErrorBody): boolean {
  if (e.details?.some((d) => d.reason === 'API_KEY_INVALID')) return true;
  return /api key (not valid|invalid|expired)/i.test(e.message ?? '');
}

/** `google.rpc.RetryInfo.retryDelay` ("34s", "0.5s"): how Gemini says when to retry a 429. */
function retryInfoMs(e: GeminiErrorBody): number | undefined {
  for (const d of e.details ?? []) {
    if (typeof d['@type'] !== 'string' || !d['@type'].endsWith('google.rpc.RetryInfo')) continue;
    const m = typeof d.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(d.retryDelay) : null;
    if (m) return Math.round(Number(m[1]) * 1000);
  }
  return undefined;
}

/** Google's front ends answer some failures with HTML pages; the title or a tag-free snippet says enough. */
function snippet(text: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  const plain = (title ?? text)
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
}

/** Builds the failure for a parsed Gemini error object; `status` is the HTTP status it came with. */
export function failureFromGeminiError(status: number, e: GeminiErrorBody): UpstreamFailure {
  const badKey = status === 400 && isBadApiKey(e);
  const code = e.status ?? null;
  const out: UpstreamFailure = {
    status: badKey ? 401 : status,
    message: e.message || `Gemini returned HTTP ${status}`,
    type: badKey ? 'invalid_api_key' : ((code !== null ? TYPE_BY_STATUS[code] : undefined) ?? typeForHttpStatus(status)),
    code,
  };
  const retry = retryInfoMs(e);
  if (retry !== undefined) out.retryAfterMs = retry;
  return out;
}

export function parseGeminiError(status: number, bodyText: string, headers: Headers, now = Date.now()): UpstreamFailure {
  let body: GeminiErrorBody | null = null;
  try {
    body = readErrorBody(JSON.parse(bodyText));
  } catch {
    // Not JSON: an HTML page from a front end or a truncated body; the snippet below says what there is.
  }
  let out: UpstreamFailure;
  if (body !== null) {
    out = failureFromGeminiError(status, body);
  } else {
    const text = snippet(bodyText);
    out = {
      status,
      message: text ? `Gemini returned HTTP ${status}: ${text}` : `Gemini returned HTTP ${status} with an empty body`,
      type: typeForHttpStatus(status),
      code: null,
    };
  }
  // A header, when present, is the transport's word and wins over the body's RetryInfo.
  const fromHeader = headerRetryAfterMs(headers);
  if (fromHeader !== undefined) out.retryAfterMs = fromHeader;
  return out;
}

/**
 * An `{"error":{...}}` event inside a 200 stream. Its `code` is the HTTP status the error would have
 * had; without one it is reported as a bad gateway.
 */
export function streamErrorFailure(raw: unknown): UpstreamFailure {
  const body = readErrorBody(raw) ?? {};
  const status = typeof body.code === 'number' && body.code >= 400 && body.code <= 599 ? body.code : 502;
  const out = failureFromGeminiError(status, body);
  if (!body.message) out.message = 'Gemini reported an error in the stream';
  return out;
}
