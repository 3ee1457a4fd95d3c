/**
 * Provider data a client must hand back untouched (thinking signatures, encrypted reasoning, Gemini
 * thought signatures), carried through protocols that have no field of their own for it.
 *
 * - Responses: the reasoning item's `encrypted_content`. OpenAI's own value goes out and comes back as
 *   is; anything the gateway carries for another provider is wrapped under a `gw1:` prefix with its
 *   origin, so it is recognised on the way back and never sent to a provider that did not make it.
 * - Anthropic Messages: a tool call's opaque data (Gemini's thought signature) rides inside its
 *   `tool_use` id, reversibly: every client echoes that id on the call and on its `tool_result`, whereas
 *   thinking blocks are dropped by some clients and belong to Anthropic's signature checks.
 */
import type { OpaqueData } from '../pipeline/call-model.ts';

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

/** Anthropic ids are `[a-zA-Z0-9_-]+`; base64url stays inside that alphabet. */
const TOOL_ID_PREFIX = 'toolu_gw1_';

/** A tool call id that also carries the call's opaque data (unchanged when it has none). */
export function encodeToolId(id: string, opaque: OpaqueData | undefined): string {
  if (opaque === undefined || opaque.origin === 'anthropic') return id;
  return TOOL_ID_PREFIX + Buffer.from(JSON.stringify({ i: id, o: opaque.origin, v: opaque.value })).toString('base64url');
}

/** The original id and opaque data of an id made by `encodeToolId`; any other id comes back as is. */
export function decodeToolId(id: string): { id: string; opaque?: OpaqueData } {
  if (!id.startsWith(TOOL_ID_PREFIX)) return { id };
  try {
    const j = JSON.parse(Buffer.from(id.slice(TOOL_ID_PREFIX.length), 'base64url').toString('utf8')) as { i?: unknown; o?: unknown; v?: unknown };
    if (typeof j.i === 'string' && typeof j.o === 'string' && typeof j.v === 'string') return { id: j.i, opaque: { origin: j.o, value: j.v } };
  } catch {
    /* a client's own id that happens to share the prefix */
  }
  return { id };
}
