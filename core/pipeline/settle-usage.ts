/** What a served call used, settled once: the record's usage (clamped), its price, and its tokens for the key's TPM. */
import { priceUsage } from '../gateway/call-record.ts';
import type { Candidate } from '../gateway/model-router.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import type { Usage } from '../usage.ts';

/** Returns the usage as recorded: impossible counts the upstream sent are clamped, and the client sees those. */
export function settleUsage(ctx: RequestContext, candidate: Candidate, usage: Usage): Usage {
  const { deps, record } = ctx;
  record.usage = usage;
  const settled = record.usage ?? usage;
  record.priced = priceUsage(deps, candidate.runtime.settings, candidate.model, settled);
  // Only a key with a TPM limit has a token window to keep: for the others, an entry per call held a minute
  // (at 4,000 calls/s, 240,000 objects; in team mode, a Redis call each) that nothing ever read.
  if (ctx.key.tpm) deps.limiter.recordTokens(ctx.key.id, settled.inputTokens + settled.outputTokens);
  return settled;
}
