/**
 * A client that leaves while a provider works on its call (a short client timeout, a cancelled tool): the
 * provider had the whole request and bills at least its prompt, so the row names the provider and its
 * attempts and the key pays the prompt, estimated, as for a stream cut after it began (which also pays the
 * output relayed). Without this, a tool that gives up and retries ran up provider spend its key never saw.
 */
import type { AttemptInFlight } from '../gateway/attempts.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import type { PipelineCall } from './pipeline-call.ts';
import { settleUsage } from './settle-usage.ts';

export async function billCutAttempt(ctx: RequestContext, call: PipelineCall, inFlight: AttemptInFlight): Promise<void> {
  ctx.record.servedBy(inFlight);
  const prompt = await call.estimate('');
  settleUsage(ctx, inFlight.candidate, { ...prompt, outputTokens: 0, reasoningTokens: 0, estimated: true });
}
