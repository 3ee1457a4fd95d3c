/**
 * Presets over the OpenAI-compatible adapter: where each popular provider lives, which env var
 * usually holds its key, and the quirks we know of. Quirks the gateway can also learn at run time
 * (a provider that refuses `stream_options`) are listed so the first call need not fail.
 */
import type { ProviderType } from './types.ts';

export interface Preset {
  baseUrl: string;
  /** The variable people usually keep this key in (suggested in help texts). */
  keyEnv: string | null;
  needsKey: boolean;
  /** Merged into the provider's options. */
  options: Record<string, unknown>;
  /** What genai-prices calls this provider, for cost lookup. */
  pricingProvider: string | null;
}

export const PRESETS = {
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', keyEnv: 'OPENROUTER_API_KEY', needsKey: true, options: {}, pricingProvider: 'openrouter' },
  deepseek: { baseUrl: 'https://api.deepseek.com/v1', keyEnv: 'DEEPSEEK_API_KEY', needsKey: true, options: {}, pricingProvider: 'deepseek' },
  groq: { baseUrl: 'https://api.groq.com/openai/v1', keyEnv: 'GROQ_API_KEY', needsKey: true, options: {}, pricingProvider: 'groq' },
  mistral: { baseUrl: 'https://api.mistral.ai/v1', keyEnv: 'MISTRAL_API_KEY', needsKey: true, options: { streamOptions: false }, pricingProvider: 'mistral' },
  together: { baseUrl: 'https://api.together.xyz/v1', keyEnv: 'TOGETHER_API_KEY', needsKey: true, options: {}, pricingProvider: 'together' },
  xai: { baseUrl: 'https://api.x.ai/v1', keyEnv: 'XAI_API_KEY', needsKey: true, options: {}, pricingProvider: 'x-ai' },
  ollama: { baseUrl: 'http://127.0.0.1:11434/v1', keyEnv: null, needsKey: false, options: {}, pricingProvider: null },
  lmstudio: { baseUrl: 'http://127.0.0.1:1234/v1', keyEnv: null, needsKey: false, options: {}, pricingProvider: null },
  vllm: { baseUrl: 'http://127.0.0.1:8000/v1', keyEnv: null, needsKey: false, options: {}, pricingProvider: null },
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export const isPresetName = (s: string): s is PresetName => Object.hasOwn(PRESETS, s);

/** Default base URL per native type (OpenAI-style bases include `/v1`). */
export const DEFAULT_BASE_URLS: Partial<Record<ProviderType, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
  demo: 'http://127.0.0.1/demo-built-in',
};

export const DEFAULT_KEY_ENVS: Partial<Record<ProviderType, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  gemini: 'GEMINI_API_KEY',
  azure: 'AZURE_OPENAI_API_KEY',
};
