/**
 * What a failed attempt means for routing. Pure: no I/O; the only time input is the injectable clock
 * used to turn an HTTP-date `retry-after` into a delay.
 *
 * Classification table (`failover` / `countsAgainstHealth` / `retrySame`):
 *
 * | outcome                                  | failover | health | retrySame | why |
 * |------------------------------------------|----------|--------|-----------|-----|
 * | connect error, reset                     | yes      | yes    | yes       | transport trouble, may be transient |
 * | timeout                                  | yes      | yes    | no        | a provider silent past the deadline rarely answers the next moment: again, the client waits twice as long (240 s by default) with no byte |
 * | HTTP 5xx                                 | yes      | yes    | yes       | the provider is failing |
 * | HTTP 408 (upstream request timeout)      | yes      | yes    | yes       | a timeout by another name |
 * | HTTP 429                                 | yes      | NO     | yes       | rate-limited is not broken: opening the breaker would hide a healthy provider for a whole cooldown; retry-after governs when to come back |
 * | HTTP 401, 403                            | yes      | yes    | no        | the provider rejected ITS key (never the client's): a config problem a retry will not fix |
 * | HTTP 402                                 | yes      | yes    | no        | the provider account is out of credit (OpenRouter, DeepSeek): the provider's problem, not the client's |
 * | HTTP 404                                 | yes      | no     | no        | that provider lacks the model (or its address is wrong), which the others may serve; neutral, as a client's typo routed to a provider that takes any name is no fault of it. When every provider answered 404, the client gets it as said (attempts.ts) |
 * | other 4xx (400, 409, 413, 422, ...)      | no       | no     | no        | the request itself is wrong: straight back to the client; the provider did its job |
 * | http without a status, or < 400          | yes      | yes    | yes       | a malformed or unexpected answer is the provider misbehaving |
 *
 * `retrySame` says whether the SAME provider may be tried again later in the same request (see
 * backoff.ts `planAttempts`); `failover` whether the next candidate should be tried at all.
 */
import { systemClock, type Clock } from './clock.ts';

export type FailureKind = 'connect' | 'timeout' | 'reset' | 'http';

export interface AttemptFailure {
  kind: FailureKind;
  /** The upstream HTTP status when `kind` is `http`. */
  status?: number;
}

export interface FailureClass {
  /** Move on to the next candidate (false: answer the client with this error now). */
  failover: boolean;
  /** Report to the circuit breaker as a failure (false: report as neutral). */
  countsAgainstHealth: boolean;
  /** Whether a later retry of this same provider could help. */
  retrySame: boolean;
}

const PROVIDER_FAULT: FailureClass = { failover: true, countsAgainstHealth: true, retrySame: true };
const PROVIDER_CONFIG: FailureClass = { failover: true, countsAgainstHealth: true, retrySame: false };
const RATE_LIMITED: FailureClass = { failover: true, countsAgainstHealth: false, retrySame: true };
const CLIENT_FAULT: FailureClass = { failover: false, countsAgainstHealth: false, retrySame: false };
const NOT_HERE: FailureClass = { failover: true, countsAgainstHealth: false, retrySame: false };

export function classifyFailure(f: AttemptFailure): FailureClass {
  if (f.kind === 'timeout') return { ...PROVIDER_FAULT, retrySame: false };
  if (f.kind !== 'http') return { ...PROVIDER_FAULT };
  const s = f.status;
  if (s === undefined || !Number.isFinite(s) || s < 400 || s >= 500) return { ...PROVIDER_FAULT };
  if (s === 429) return { ...RATE_LIMITED };
  if (s === 408) return { ...PROVIDER_FAULT };
  if (s === 401 || s === 402 || s === 403) return { ...PROVIDER_CONFIG };
  if (s === 404) return { ...NOT_HERE };
  return { ...CLIENT_FAULT };
}

export type HeaderBag = Record<string, string | string[] | undefined> | Headers;

/**
 * The delay a provider asked for, in ms: `retry-after-ms` (float ms) first, then `retry-after`
 * (float seconds, or an HTTP-date measured against `clock`). Negative, non-finite or unparsable values
 * are ignored (the next header is tried); a date in the past is ignored too. Header names are matched
 * case-insensitively; for a repeated header the first value is used.
 */
export function retryAfterMs(headers: HeaderBag, clock: Clock = systemClock): number | undefined {
  const ms = parseNonNegative(header(headers, 'retry-after-ms'));
  if (ms !== undefined) return ms;
  const raw = header(headers, 'retry-after');
  if (raw === undefined) return undefined;
  const seconds = parseNonNegative(raw);
  if (seconds !== undefined) return seconds * 1000;
  const at = parseHttpDate(raw);
  if (at === undefined) return undefined;
  const delta = at - clock.now();
  return delta >= 0 ? delta : undefined;
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  for (const key of Object.keys(bag)) {
    if (key.toLowerCase() !== name) continue;
    const v = bag[key];
    return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

const DECIMAL = /^\+?(?:\d+(?:\.\d*)?|\.\d+)$/;

function parseNonNegative(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (!DECIMAL.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

// RFC 9110 §5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms recipients must accept.
const IMF_FIXDATE = /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850 = /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

function parseHttpDate(raw: string): number | undefined {
  const s = raw.trim();
  let t: number;
  if (IMF_FIXDATE.test(s) || RFC850.test(s)) t = Date.parse(s);
  else if (ASCTIME.test(s)) t = Date.parse(`${s} GMT`); // asctime has no zone: it is GMT by definition
  else return undefined;
  return Number.isFinite(t) ? t : undefined;
}
