/**
 * Reasoning that only one provider kind can read back travels through a Responses client as the
 * reasoning item's `encrypted_content`. OpenAI's own value goes out and comes back as is; anything the
 * gateway carries for another provider (an Anthropic thinking signature, a Gemini thought signature) is
 * wrapped under a `gw1:` prefix with its origin, so it is recognised on the way back and never sent to
 * a provider that did not make it.
 */
import type { OpaqueData } from '../../pipeline/call-model.ts';

const PREFIX = 'gw1:';

export function encodeOpaque(opaque: OpaqueData): string {
  if (opaque.origin === 'openai') return opaque.value;
  return PREFIX + Buffer.from(JSON.stringify({ o: opaque.origin, v: opaque.value })).toString('base64url');
}

export function decodeOpaque(encrypted: string): OpaqueData {
  if (!encrypted.startsWith(PREFIX)) return { origin: 'openai', value: encrypted };
  try {
    const j = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8')) as { o?: unknown; v?: unknown };
    if (typeof j.o === 'string' && typeof j.v === 'string') return { origin: j.o, value: j.v };
  } catch {
    /* not ours after all: treat as OpenAI's */
  }
  return { origin: 'openai', value: encrypted };
}
