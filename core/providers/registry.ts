/** Maps a provider type to its adapter. */
import { anthropicAdapter } from './anthropic/index.ts';
import { geminiAdapter } from './gemini/index.ts';
import { makeOpenAIAdapter } from './openai/index.ts';
import { azureAdapter } from './azure/index.ts';
import type { ProviderAdapter, ProviderType } from './types.ts';

const ADAPTERS: Record<ProviderType, ProviderAdapter> = {
  openai: makeOpenAIAdapter('openai'),
  'openai-compatible': makeOpenAIAdapter('openai-compatible'),
  demo: makeOpenAIAdapter('demo'),
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
  azure: azureAdapter,
};

export const adapterFor = (type: ProviderType): ProviderAdapter => ADAPTERS[type];
