/**
 * Tool-call identity across the translation. Gemini's function calls carry no usable id, so we mint
 * OpenAI-style ones, and on the way back a tool result finds its function name through the id of the
 * assistant tool call it answers.
 *
 * Gemini 3 also attaches a `thoughtSignature` to function-call parts and rejects the next request
 * (400) if the replayed call lacks it. We hand it to the client the way Google's own OpenAI-compatible
 * endpoint does, as `tool_calls[].extra_content.google.thought_signature`, and read it back from
 * there. Clients that rebuild assistant messages from id/name/arguments lose it; for them the request
 * mapping falls back to Google's documented placeholder. Packing the signature into the id (LiteLLM's
 * approach) was rejected: ids of several hundred characters break other providers' id limits, and
 * this gateway fails over between providers mid-conversation.
 */
import { randomBytes } from 'node:crypto';
import type { GeminiResponsePart } from './wire.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `call_` + 24 base62 characters, the shape OpenAI uses (well under its 40-character id limit). */
export function mintToolCallId(): string {
  const bytes = randomBytes(24);
  let out = 'call_';
  // 256 % 62 leaves a tiny bias; these ids need uniqueness, not uniformity.
  for (const b of bytes) out += ALPHABET[b % 62];
  return out;
}

/** Google's documented value for replayed calls whose real signature is unknown. */
export const PLACEHOLDER_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  extra_content?: { google: { thought_signature: string } };
}

/** The OpenAI tool call for a `functionCall` part, or null when the part is something else. */
export function toolCallFromPart(part: GeminiResponsePart): OpenAIToolCall | null {
  const fc = part.functionCall;
  if (fc === undefined || fc === null || typeof fc !== 'object') return null;
  const args = fc.args !== null && typeof fc.args === 'object' ? fc.args : {};
  const call: OpenAIToolCall = {
    id: mintToolCallId(),
    type: 'function',
    function: { name: typeof fc.name === 'string' ? fc.name : '', arguments: JSON.stringify(args) },
  };
  if (typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '') {
    call.extra_content = { google: { thought_signature: part.thoughtSignature } };
  }
  return call;
}

/** Reads the signature a client echoed back on an assistant tool call, if it kept it. */
export function thoughtSignatureOf(toolCall: Record<string, unknown>): string | undefined {
  const extra = toolCall.extra_content;
  if (extra === null || typeof extra !== 'object') return undefined;
  const google = (extra as Record<string, unknown>).google;
  if (google === null || typeof google !== 'object') return undefined;
  const sig = (google as Record<string, unknown>).thought_signature;
  return typeof sig === 'string' && sig !== '' ? sig : undefined;
}
