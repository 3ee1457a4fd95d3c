/** `POST /v1/chat/completions`: admission, failover across candidates, cost, audit. */
import { toOpenAIUsage } from '../usage.ts';
import type { Usage } from '../usage.ts';
import { formatUsd, stringifyWithCost } from '../pricing/cost.ts';
import type { ChatRequest, ChatResult } from '../providers/types.ts';
import { admit } from './admission.ts';
import { runAttempts } from './attempts.ts';
import type { AttemptOutcome } from './attempts.ts';
import { priceUsage } from './call-record.ts';
import { validateChatRequest } from './chat-validate.ts';
import { chatPromptText, countTokens, estimateUsage } from './estimate.ts';
import type { RequestContext } from './request-context.ts';
import { clientGone } from './request-context.ts';
import { streamChat } from './chat-stream.ts';
import { readJsonBody, sendToProvider, timeoutsFor } from './upstream-call.ts';

export function maxOutputTokens(body: Record<string, unknown>): number | null {
  const v = body.max_completion_tokens ?? body.max_tokens;
  return typeof v === 'number' && v > 0 ? v : null;
}

export async function handleChat(ctx: RequestContext, raw: Record<string, unknown>): Promise<void> {
  const body = validateChatRequest(raw);
  ctx.record.modelRequested = body.model;
  const promptText = chatPromptText(body.messages);
  const admission = admit(ctx, body.model, { inputTokens: () => countTokens(promptText), maxOutputTokens: maxOutputTokens(body), n: typeof body.n === 'number' ? body.n : 1, serviceTier: typeof body.service_tier === 'string' ? body.service_tier : undefined });
  try {
    if (body.stream === true) {
      await streamChat(ctx, body, admission, promptText);
    } else {
      await completeChat(ctx, body, admission.candidates, admission.strategy, promptText);
    }
  } finally {
    // Whatever the outcome (even a client gone mid-stream), the key pays what the record says was used.
    admission.settle(ctx.record.priced.costUsd);
  }
}

async function completeChat(
  ctx: RequestContext,
  body: ChatRequest,
  candidates: Parameters<typeof runAttempts>[1],
  strategy: Parameters<typeof runAttempts>[2],
  promptText: string,
): Promise<number | null> {
  const { deps, record } = ctx;
  const timeouts = timeoutsFor(deps, false);
  const success = await runAttempts<ChatResult>(
    deps,
    candidates,
    strategy,
    async (c, apiKey): Promise<AttemptOutcome<ChatResult>> => {
      const callCtx = { provider: c.runtime.settings, model: c.model, apiKey, stream: false };
      const sent = await sendToProvider(deps, c.runtime.adapter, c.runtime.adapter.chatRequest(body, callCtx), timeouts, ctx.abort.signal);
      if (!sent.ok) return sent;
      const read = await readJsonBody(sent.res);
      if (!read.ok) return read;
      try {
        return { ok: true, value: c.runtime.adapter.chatResponse(read.json, callCtx) };
      } catch (err) {
        return { ok: false, failure: { kind: 'http', failure: { status: 502, message: `unreadable response: ${(err as Error).message}`, type: 'api_error', code: 'malformed_response' } } };
      }
    },
    () => clientGone(ctx),
  );

  const { candidate, value } = success;
  record.servedBy(success);

  let usage: Usage | null = value.usage;
  if (!usage) {
    usage = await estimateUsage(promptText, completionText(value.body), body.messages.length);
    value.body.usage = toOpenAIUsage(usage);
  }
  if (typeof value.body.service_tier === 'string') usage = { ...usage, serviceTier: value.body.service_tier };
  record.usage = usage;
  record.priced = priceUsage(deps, candidate.runtime.settings, candidate.model, usage);
  const headers = successHeaders(ctx, candidate.provider, candidate.model, success.attempts.length, record.priced.pricing);
  if (record.priced.costUsd !== null) headers['x-gateway-cost-usd'] = formatUsd(record.priced.costUsd);
  deps.limiter.recordTokens(ctx.key.id, usage.inputTokens + usage.outputTokens);
  const text = stringifyWithCost(value.body, value.body.usage as Record<string, unknown>, record.priced.costUsd);
  record.responseBody = text;
  ctx.res.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  ctx.res.end(text);
  return record.priced.costUsd;
}

/** Headers of a response that reached a provider; a stream learns its pricing only at the end. */
export function successHeaders(ctx: RequestContext, provider: string, model: string, attempts: number, pricing: string | null): Record<string, string> {
  const h: Record<string, string> = {
    ...ctx.baseHeaders,
    'x-request-id': ctx.requestId,
    'x-gateway-provider': provider,
    'x-gateway-model': model,
    'x-gateway-attempts': String(attempts),
  };
  if (pricing) h['x-gateway-pricing'] = pricing;
  return h;
}

function completionText(body: Record<string, unknown>): string {
  const choices = body.choices;
  if (!Array.isArray(choices)) return '';
  let out = '';
  for (const c of choices) {
    const msg = (c as { message?: { content?: unknown; tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }> } })?.message;
    if (typeof msg?.content === 'string') out += msg.content;
    for (const t of msg?.tool_calls ?? []) out += `${String(t.function?.name ?? '')}${String(t.function?.arguments ?? '')}`;
  }
  return out;
}
