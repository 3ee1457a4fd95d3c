/** Removes secrets from text that may reach a client, a log or the audit table. */
// One pass over the text, not one per vendor: OpenAI, Anthropic (sk-ant-), OpenRouter (sk-or-) and our own
// sk-gw- keys; Google (AIza), Groq (gsk_) and xAI (xai-).
const KEY_PATTERN = /sk-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{20,}|gsk_[A-Za-z0-9]{20,}|xai-[A-Za-z0-9]{20,}/g;

export function scrubSecrets(text: string, secrets: ReadonlyArray<string | null | undefined> = []): string {
  let out = text;
  // `includes` first: a secret is almost never there, and split/join would copy the text anyway.
  for (const s of secrets) if (s && s.length >= 8 && out.includes(s)) out = out.replaceAll(s, '[redacted]');
  out = out.replace(KEY_PATTERN, '[redacted]');
  return out;
}
