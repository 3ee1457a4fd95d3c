/**
 * A call row as a positional array, for the hop to the audit thread. Structured clone writes every property
 * name of every object it copies and the receiver rebuilds each object key by key; an array of the same
 * values costs ~1.5 µs less per row across both threads (measured with `v8.serialize`, 30-row batches).
 */
import type { CallRow } from './call-row.ts';

export type CallRowTuple = [
  id: CallRow['id'],
  time: CallRow['time'],
  keyId: CallRow['keyId'],
  keyName: CallRow['keyName'],
  endpoint: CallRow['endpoint'],
  modelRequested: CallRow['modelRequested'],
  model: CallRow['model'],
  provider: CallRow['provider'],
  status: CallRow['status'],
  errorType: CallRow['errorType'],
  errorMessage: CallRow['errorMessage'],
  stream: CallRow['stream'],
  inputTokens: CallRow['inputTokens'],
  outputTokens: CallRow['outputTokens'],
  cachedTokens: CallRow['cachedTokens'],
  cacheWriteTokens: CallRow['cacheWriteTokens'],
  reasoningTokens: CallRow['reasoningTokens'],
  costUsd: CallRow['costUsd'],
  pricing: CallRow['pricing'],
  priceVersion: CallRow['priceVersion'],
  latencyMs: CallRow['latencyMs'],
  ttftMs: CallRow['ttftMs'],
  attempts: CallRow['attempts'],
  attemptsJson: CallRow['attemptsJson'],
  requestBody: CallRow['requestBody'],
  requestBytes: CallRow['requestBytes'],
  responseBody: CallRow['responseBody'],
  bodySecrets: CallRow['bodySecrets'],
  userAgent: CallRow['userAgent'],
  sessionId: CallRow['sessionId'],
  replayed: CallRow['replayed'],
  requestBytesTotal: CallRow['requestBytesTotal'],
];

export function rowToTuple(r: CallRow): CallRowTuple {
  return [
    r.id, r.time, r.keyId, r.keyName, r.endpoint, r.modelRequested, r.model, r.provider, r.status, r.errorType, r.errorMessage,
    r.stream, r.inputTokens, r.outputTokens, r.cachedTokens, r.cacheWriteTokens, r.reasoningTokens, r.costUsd, r.pricing,
    r.priceVersion, r.latencyMs, r.ttftMs, r.attempts, r.attemptsJson, r.requestBody, r.requestBytes, r.responseBody,
    r.bodySecrets, r.userAgent, r.sessionId, r.replayed, r.requestBytesTotal,
  ];
}

/** The row again; optional fields that were absent stay absent. */
export function tupleToRow(t: CallRowTuple): CallRow {
  const [
    id, time, keyId, keyName, endpoint, modelRequested, model, provider, status, errorType, errorMessage, stream, inputTokens,
    outputTokens, cachedTokens, cacheWriteTokens, reasoningTokens, costUsd, pricing, priceVersion, latencyMs, ttftMs, attempts,
    attemptsJson, requestBody, requestBytes, responseBody, bodySecrets, userAgent, sessionId, replayed, requestBytesTotal,
  ] = t;
  const row: CallRow = {
    id, time, keyId, keyName, endpoint, modelRequested, model, provider, status, errorType, errorMessage, stream, inputTokens,
    outputTokens, cachedTokens, cacheWriteTokens, reasoningTokens, costUsd, pricing, priceVersion, latencyMs, ttftMs, attempts,
    attemptsJson, requestBody, responseBody,
  };
  if (requestBytes !== undefined) row.requestBytes = requestBytes;
  if (bodySecrets !== undefined) row.bodySecrets = bodySecrets;
  if (userAgent !== undefined) row.userAgent = userAgent;
  if (sessionId !== undefined) row.sessionId = sessionId;
  if (replayed !== undefined) row.replayed = replayed;
  if (requestBytesTotal !== undefined) row.requestBytesTotal = requestBytesTotal;
  return row;
}
