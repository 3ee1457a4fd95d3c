/** OpenAI error bodies (`{"error":{message,type,param,code}}`) and anything else a server may send. */
import type { UpstreamFailure } from '../types.ts';

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

export function failureFromErrorObject(status: number, error: unknown): UpstreamFailure {
  if (error && typeof error === 'object') {
    const e = error as Record<string, unknown>;
    return { status, message: str(e.message) ?? 'The provider reported an error.', type: str(e.type), code: str(e.code), param: str(e.param) };
  }
  return { status, message: str(error) ?? 'The provider reported an error.', type: null, code: null };
}

/** A short, single-line snippet of a non-JSON body (an HTML error page, say). */
export function bodySnippet(text: string): string {
  const plain = text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
}

export function parseOpenAIError(status: number, bodyText: string): UpstreamFailure {
  try {
    const json = JSON.parse(bodyText) as Record<string, unknown>;
    if (json && typeof json === 'object' && 'error' in json) return failureFromErrorObject(status, json.error);
    if (json && typeof json === 'object' && typeof json.message === 'string') return failureFromErrorObject(status, json);
  } catch {
    /* not JSON: fall through */
  }
  const snippet = bodySnippet(bodyText);
  return { status, message: snippet || `HTTP ${status} with no body`, type: null, code: null };
}

/** A chat stream closed before any choice finished, without `[DONE]` or usage: the connection broke mid-answer. */
export const endedEarly = (): UpstreamFailure => ({ status: 502, message: "The provider's stream ended early, before a finish_reason.", type: 'api_error', code: null });
