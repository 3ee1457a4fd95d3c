/** Removes secrets from text that may reach a client, a log or the audit table. */
const KEY_PATTERNS = [
  /sk-[A-Za-z0-9_-]{16,}/g, // OpenAI, Anthropic (sk-ant-), OpenRouter (sk-or-), our own sk-gw-
  /AIza[0-9A-Za-z_-]{20,}/g, // Google API keys
  /gsk_[A-Za-z0-9]{20,}/g, // Groq
  /xai-[A-Za-z0-9]{20,}/g,
];

export function scrubSecrets(text: string, secrets: ReadonlyArray<string | null | undefined> = []): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 8) out = out.split(s).join('[redacted]');
  for (const re of KEY_PATTERNS) out = out.replace(re, '[redacted]');
  return out;
}
