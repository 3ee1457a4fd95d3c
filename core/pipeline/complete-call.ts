/** A non-stream call: failover until one provider answers, then usage, cost and the front end's body. */
import { formatUsd } from '../pricing/cost.ts';
import type { Admission } from '../gateway/admission.ts';
import { runAttempts } from '../gateway/attempts.ts';
import type { AttemptOutcome } from '../gateway/attempts.ts';
import type { Candidate } from '../gateway/model-router.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import { clientGone } from '../gateway/request-context.ts';
import { successHeaders } from '../gateway/success-headers.ts';
import { readJsonBody, sendToProvider, timeoutsFor } from '../gateway/upstream-call.ts';
import { reportsCounts } from '../usage.ts';
import type { Usage } from '../usage.ts';
import type { Answer, UpstreamCodec } from './codec.ts';
import { resultText } from './codec.ts';
import type { PipelineCall } from './pipeline-call.ts';
import { settleUsage } from './settle-usage.ts';

export async function completeCall(ctx: RequestContext, call: PipelineCall, admission: Admission, codecFor: (c: Candidate) => UpstreamCodec): Promise<void> {
  const { deps, record } = ctx;
  const timeouts = timeoutsFor(deps, false);
  const success = await runAttempts<Answer>(
    deps,
    admission.candidates,
    admission.strategy,
    async (c, apiKey): Promise<AttemptOutcome<Answer>> => {
      const callCtx = { provider: c.runtime.settings, model: c.model, apiKey, stream: false };
      const codec = codecFor(c);
      const sent = await sendToProvider(deps, c.runtime.adapter, codec.request(callCtx), timeouts, ctx.abort.signal, ctx.onQueued);
      if (!sent.ok) return sent;
      const read = await readJsonBody(sent.res);
      if (!read.ok) return read;
      try {
        return { ok: true, value: codec.decode(read.json, read.text, callCtx) };
      } catch (err) {
        return { ok: false, failure: { kind: 'http', failure: { status: 502, message: `unreadable response: ${(err as Error).message}`, type: 'api_error', code: 'malformed_response' } } };
      }
    },
    () => clientGone(ctx),
  );

  const { candidate, value } = success;
  record.servedBy(success);
  const reported = value.kind === 'result' ? value.result.usage : value.usage;
  let usage: Usage;
  if (reported && reportsCounts(reported)) usage = reported;
  else {
    usage = await call.estimate(value.kind === 'result' ? resultText(value.result) : value.text);
    if (value.kind === 'result') value.result.usage = usage;
  }
  if (value.kind === 'native' && value.serviceTier !== undefined) usage = { ...usage, serviceTier: value.serviceTier };
  const settled = settleUsage(ctx, candidate, usage);
  // One headers object, built in the order they go out (no copies: this is on every call).
  const headers = successHeaders(ctx, candidate.provider, candidate.model, success.attempts.length, record.priced.pricing);
  const frontEndHeaders = call.frontEnd.headers?.(ctx.requestId);
  if (frontEndHeaders) Object.assign(headers, frontEndHeaders);
  if (record.priced.costUsd !== null) headers['x-gateway-cost-usd'] = formatUsd(record.priced.costUsd);
  const end = { usage: settled, costUsd: record.priced.costUsd, estimated: settled.estimated || settled.clamped === true };
  const text =
    value.kind === 'result'
      ? call.frontEnd.render(value.result, { requestId: ctx.requestId, requestedModel: call.request.model, model: candidate.model, provider: candidate.provider }, end)
      : value.render(end);
  record.responseBody = text;
  // Encoded once: as a string, node:http would measure it, then join it to the head and encode both.
  const body = Buffer.from(text);
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(body.length);
  ctx.res.writeHead(200, headers);
  ctx.res.end(body);
}
