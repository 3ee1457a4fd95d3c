/**
 * The environment variables a developer's existing setup keeps provider keys in (the names each
 * provider's own SDK reads), and the provider each one becomes. `gateway init` moves them into the
 * keychain; order is the order providers are added (so routing priority ties follow it).
 */
import type { ProviderType } from './types.ts';
import type { PresetName } from './presets.ts';

export interface KnownKeyVar {
  /** The variables, first found wins (Gemini's SDK reads GEMINI_API_KEY, then GOOGLE_API_KEY). */
  vars: readonly string[];
  /** The provider name `init` gives it. */
  name: string;
  type: ProviderType;
  preset: PresetName | null;
  /** The variable the provider's own SDK reads its base URL from, if any (a proxy the user already set up). */
  baseUrlVar: string | null;
}

export const KNOWN_KEY_VARS: readonly KnownKeyVar[] = [
  { vars: ['OPENAI_API_KEY'], name: 'openai', type: 'openai', preset: null, baseUrlVar: 'OPENAI_BASE_URL' },
  { vars: ['ANTHROPIC_API_KEY'], name: 'anthropic', type: 'anthropic', preset: null, baseUrlVar: 'ANTHROPIC_BASE_URL' },
  { vars: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], name: 'gemini', type: 'gemini', preset: null, baseUrlVar: null },
  { vars: ['OPENROUTER_API_KEY'], name: 'openrouter', type: 'openai-compatible', preset: 'openrouter', baseUrlVar: null },
  { vars: ['DEEPSEEK_API_KEY'], name: 'deepseek', type: 'openai-compatible', preset: 'deepseek', baseUrlVar: null },
  { vars: ['GROQ_API_KEY'], name: 'groq', type: 'openai-compatible', preset: 'groq', baseUrlVar: null },
  { vars: ['MISTRAL_API_KEY'], name: 'mistral', type: 'openai-compatible', preset: 'mistral', baseUrlVar: null },
  { vars: ['TOGETHER_API_KEY'], name: 'together', type: 'openai-compatible', preset: 'together', baseUrlVar: null },
  { vars: ['XAI_API_KEY'], name: 'xai', type: 'openai-compatible', preset: 'xai', baseUrlVar: null },
];
