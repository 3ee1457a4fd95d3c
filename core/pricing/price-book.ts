/**
 * Which price applies to a (provider, model) pair. Prices come from the user's overrides, the demo
 * provider, or the data bundled in `@pydantic/genai-prices` (offline, no network).
 *
 * genai-prices matches the model id against every pattern of a provider on each `calcPrice` call
 * (tens of µs warm, hundreds on a model's first call), so each (provider type, preset, model) is
 * resolved once and kept; the hot path is then a few Map lookups (~100 ns). Only a model's
 * dated rates (announced price changes) are re-picked per call, from a short precompiled list;
 * time-of-day discounts are stale data and ignored (see `toResolved`).
 *
 * The preset mapping is kept here rather than read from `providers/presets.ts`: pricing needs to
 * tell a local server (ollama, lmstudio: unpriced) from an unknown host (vllm: infer from the name).
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConditionalPrice, ModelInfo, ModelPrice as BundledPrice } from '@pydantic/genai-prices';
import type { ProviderType } from '../providers/types.ts';
import { BUILTIN_PRICES, DEFAULT_SERVICE_TIERS } from './builtin-prices.ts';
import { modelOutputLimit } from './output-limits.ts';
import type { ModelPrice, PriceTier, UserPrice } from './price.ts';

const DEMO_PRICE: ModelPrice = Object.freeze({
  inputPerMTok: 1,
  outputPerMTok: 2,
  cacheReadPerMTok: null,
  cacheWritePerMTok: null,
  maxOutputTokens: 4_096,
  // "Demo reply to: " is 5 tokens; one more for a boundary merge.
  echoOverheadTokens: 6,
  source: 'demo',
});
const DEMO_MODELS: ReadonlySet<string> = new Set(['demo-chat', 'demo-embedding']);

/** genai-prices ids of our native types. Azure's entry falls back to OpenAI's (and others') models itself. */
const TYPE_TO_BUNDLED: Partial<Record<ProviderType, string>> = {
  openai: 'openai',
  azure: 'azure',
  anthropic: 'anthropic',
  gemini: 'google',
};

/**
 * Presets over the OpenAI-compatible adapter. `null`: a local server (what runs on the laptop costs
 * nothing we can know; the user may set a price). Absent (vllm, no preset): unknown host, so the
 * model name alone decides.
 */
const PRESET_TO_BUNDLED: Record<string, string | null> = {
  openrouter: 'openrouter',
  deepseek: 'deepseek',
  groq: 'groq',
  mistral: 'mistral',
  together: 'together',
  xai: 'x-ai',
  ollama: null,
  lmstudio: null,
};

/** Vendor prefixes of `vendor/model` ids whose genai-prices id differs from the prefix. */
const PREFIX_TO_BUNDLED: Record<string, string> = {
  xai: 'x-ai',
  mistralai: 'mistral',
  gemini: 'google',
  'google-ai-studio': 'google',
};

/** Usage with nothing in it: we call calcPrice only for its model matching, never for its arithmetic. */
const MATCH_ONLY_USAGE = { input_tokens: 0, output_tokens: 0 };

/** Unknown model ids come from clients; a bound keeps a misbehaving script from growing the cache forever. */
const MAX_CACHED = 10_000;

/** A model whose rates depend on the time of the call, newest rule last (genai-prices' own order). */
interface Schedule {
  /** `applies` takes epoch milliseconds; null means the rule has no constraint. */
  readonly rules: readonly { readonly applies: ((atMs: number) => boolean) | null; readonly price: ModelPrice }[];
}
type Resolved = ModelPrice | Schedule | null;

export class PriceBook {
  #user = new Map<string, ModelPrice>();
  #cache = new Map<ProviderType, Map<string | null, Map<string, Resolved>>>();
  #cached = 0;
  #bundledMatches = 0;
  readonly #calcPrice: () => CalcPrice;

  /** `calcPrice`: genai-prices' matcher, loaded on first use unless given (tests spy on it this way). */
  constructor(calcPrice?: CalcPrice) {
    this.#calcPrice = calcPrice ? () => calcPrice : bundledCalcPrice;
  }

  /**
   * The price for `model` as served by this provider, or null when nobody knows it (the call is then
   * recorded `unpriced`). `at` picks time-dependent rates; it defaults to now.
   */
  lookup(providerType: ProviderType, preset: string | null, model: string, at?: Date): ModelPrice | null {
    // Nested maps rather than one joined key: building `${type}|${preset}|${model}` on every call
    // allocates and rehashes a fresh string, which costs more than the lookups themselves.
    let byPreset = this.#cache.get(providerType);
    if (byPreset === undefined) this.#cache.set(providerType, (byPreset = new Map()));
    let byModel = byPreset.get(preset);
    if (byModel === undefined) byPreset.set(preset, (byModel = new Map()));
    let resolved = byModel.get(model);
    if (resolved === undefined) {
      resolved = this.#resolve(providerType, preset, model);
      if (this.#cached >= MAX_CACHED) {
        this.#clearCache();
        byModel = new Map();
        this.#cache.set(providerType, new Map([[preset, byModel]]));
      }
      byModel.set(model, resolved);
      this.#cached++;
    }
    if (resolved === null || !('rules' in resolved)) return resolved;
    return pick(resolved, at === undefined ? Date.now() : at.getTime());
  }

  /**
   * Replaces the user's prices (keyed by the exact model id). They win over bundled and demo prices
   * for every provider serving that id.
   */
  setUserPrices(map: Record<string, UserPrice>): void {
    const next = new Map<string, ModelPrice>();
    for (const [model, p] of Object.entries(map)) next.set(model, userPrice(model, p));
    this.#user = next;
    this.#clearCache();
  }

  /** The price data's version, recorded on every usage row so old costs stay explainable. */
  dataVersion(): string {
    return bundledDataVersion();
  }

  /** How many times this book asked genai-prices to match a model (cache misses do; hits must not). */
  get bundledMatches(): number {
    return this.#bundledMatches;
  }

  #clearCache(): void {
    this.#cache.clear();
    this.#cached = 0;
  }

  #resolve(providerType: ProviderType, preset: string | null, model: string): Resolved {
    const user = this.#user.get(model);
    if (user) return user;
    if (providerType === 'demo') return DEMO_MODELS.has(model) ? DEMO_PRICE : null;
    const builtinHost = providerType === 'openai-compatible' ? preset : providerType;
    const builtin = builtinHost === null ? undefined : BUILTIN_PRICES[builtinHost]?.[model];
    if (builtin) return builtin;

    let host: string | null | undefined = TYPE_TO_BUNDLED[providerType];
    if (providerType === 'openai-compatible' && preset !== null && Object.hasOwn(PRESET_TO_BUNDLED, preset)) {
      host = PRESET_TO_BUNDLED[preset];
      if (host === null) return null;
    }

    if (host) {
      const own = this.#match(model, host);
      if (own !== null) return own;
      // Only a host that resells other vendors' models under `vendor/model` ids (OpenRouter) may borrow
      // the vendor's price for a model its own list lacks. Groq or Together serving `openai/gpt-oss-120b`
      // charge their own rates, so borrowing OpenAI's would misstate the cost; for them a prefix
      // (`models/gemini-2.5-pro`) is only dropped to retry the host's own list.
      if (host === 'openrouter') return this.#matchVendorPrefixed(model);
      const slash = model.indexOf('/');
      return slash > 0 && slash < model.length - 1 ? this.#match(model.slice(slash + 1), host) : null;
    }

    // Unknown host (vLLM, any --base-url): infer the vendor from the name (`gpt-*` → OpenAI, `claude*` →
    // Anthropic, `gemini*` → Google, ...) via genai-prices' per-provider model patterns.
    return this.#match(model, undefined) ?? this.#matchVendorPrefixed(model);
  }

  /** `anthropic/claude-…`: price the rest with the vendor the prefix names, else by the name alone. */
  #matchVendorPrefixed(model: string): Resolved {
    const slash = model.indexOf('/');
    if (slash <= 0 || slash === model.length - 1) return null;
    const prefix = model.slice(0, slash).toLowerCase();
    const rest = model.slice(slash + 1);
    return this.#match(rest, PREFIX_TO_BUNDLED[prefix] ?? prefix) ?? this.#match(rest, undefined);
  }

  #match(model: string, providerId: string | undefined): Resolved {
    this.#bundledMatches++;
    let info: ModelInfo;
    try {
      const found = this.#calcPrice()(MATCH_ONLY_USAGE, model, providerId === undefined ? undefined : { providerId });
      if (found === null) return null;
      info = found.model;
    } catch {
      // calcPrice validates the model's price keys as it computes; a malformed entry is simply unpriced.
      return null;
    }
    return toResolved(info, model);
  }
}

function userPrice(model: string, p: UserPrice): ModelPrice {
  const check = (v: unknown): void => {
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
      throw new RangeError(`price for ${model}: rates must be finite numbers >= 0`);
    }
  };
  for (const v of [p.inputPerMTok, p.outputPerMTok]) if (typeof v !== 'number') throw new RangeError(`price for ${model}: rates must be finite numbers >= 0`);
  for (const [k, v] of Object.entries(p)) {
    if (k === 'perImageUsd' || k === 'serviceTierMultipliers') for (const x of Object.values((v ?? {}) as Record<string, unknown>)) check(x);
    else check(v);
  }
  const tiers: PriceTier[] | undefined =
    p.tierAbove != null && (p.tierInputPerMTok != null || p.tierOutputPerMTok != null)
      ? [{ above: p.tierAbove, inputPerMTok: p.tierInputPerMTok ?? p.inputPerMTok, outputPerMTok: p.tierOutputPerMTok ?? p.outputPerMTok, cacheReadPerMTok: p.cacheReadPerMTok ?? null, cacheWritePerMTok: p.cacheWritePerMTok ?? null, cacheWrite1hPerMTok: p.cacheWrite1hPerMTok ?? null }]
      : undefined;
  return Object.freeze({
    inputPerMTok: p.inputPerMTok,
    outputPerMTok: p.outputPerMTok,
    cacheReadPerMTok: p.cacheReadPerMTok ?? null,
    cacheWritePerMTok: p.cacheWritePerMTok ?? null,
    cacheWrite1hPerMTok: p.cacheWrite1hPerMTok ?? null,
    ...(tiers ? { tiers } : {}),
    audioInputPerMTok: p.audioInputPerMTok ?? null,
    audioOutputPerMTok: p.audioOutputPerMTok ?? null,
    imageInputPerMTok: p.imageInputPerMTok ?? null,
    imageOutputPerMTok: p.imageOutputPerMTok ?? null,
    perMinuteUsd: p.perMinuteUsd ?? null,
    perImageUsd: p.perImageUsd ?? null,
    serviceTierMultipliers: p.serviceTierMultipliers ?? DEFAULT_SERVICE_TIERS,
    maxOutputTokens: p.maxOutputTokens ?? modelOutputLimit(model),
    source: 'user' as const,
  });
}

/** Mirrors genai-prices' own rule: the last rule whose constraint holds wins; the first is the fallback. */
function pick(s: Schedule, atMs: number): ModelPrice {
  for (let i = s.rules.length - 1; i > 0; i--) {
    const rule = s.rules[i];
    if (rule.applies === null || rule.applies(atMs)) return rule.price;
  }
  return s.rules[0].price;
}

function toResolved(info: ModelInfo, model: string): Resolved {
  const extra = { contextWindow: info.context_window ?? null, maxOutputTokens: modelOutputLimit(model) };
  if (!Array.isArray(info.prices)) return flatten(info.prices, extra);
  const conditional: ConditionalPrice[] = info.prices;
  // A time-of-day rule is a night discount over a standard daytime price (DeepSeek's, ended in
  // September 2025, still in the bundled data): the standard price now applies at every hour.
  const daytime = conditional.find((c) => c.constraint?.type === 'time_of_date');
  if (daytime) return flatten(daytime.prices, extra);
  const rules: { applies: ((atMs: number) => boolean) | null; price: ModelPrice }[] = [];
  for (const c of conditional) {
    const price = flatten(c.prices, extra);
    const applies = c.constraint === undefined ? null : compileConstraint(c.constraint);
    // A rule we cannot price or parse is skipped: better the neighbouring rate than no price at all.
    if (price !== null && applies !== undefined) rules.push({ applies, price });
  }
  if (rules.length === 0) return null;
  return rules.length === 1 ? rules[0].price : { rules };
}

/** undefined = a constraint this code does not understand. */
function compileConstraint(c: NonNullable<ConditionalPrice['constraint']>): ((atMs: number) => boolean) | undefined {
  if (c.type === 'start_date') {
    const from = Date.parse(`${c.start_date}T00:00:00Z`);
    return Number.isNaN(from) ? undefined : (atMs) => atMs >= from;
  }
  // time_of_date never gets here: toResolved takes the daytime price before compiling rules.
  return undefined;
}

/**
 * genai-prices' record → our price: the base token rates, the long-context tiers (a tier applies to
 * every token of a call whose prompt is above its start, as genai-prices and the providers count),
 * 1-hour cache writes, audio and image token rates, and per-hour audio prices as per-minute ones.
 */
function flatten(p: BundledPrice, extra: { contextWindow: number | null; maxOutputTokens: number }): ModelPrice | null {
  const input = rate(p.input_mtok);
  const output = rate(p.output_mtok);
  const hours = rate(p.input_audio_hours) ?? rate(p.audio_hours);
  if (input === undefined && output === undefined && hours === undefined) {
    // `{}` is genai-prices' way of saying free (`:free` variants, moderation). A record that only
    // has other units (pages, searches) cannot price what the gateway serves.
    const hasOtherUnits = Object.values(p).some((v) => v !== undefined);
    if (hasOtherUnits) return null;
  }
  const starts = new Set<number>();
  for (const v of Object.values(p)) if (v !== undefined && typeof v === 'object') for (const t of v.tiers) starts.add(t.start);
  const at = (v: BundledPrice[string], start: number): number | undefined => {
    if (typeof v === 'number' || v === undefined) return v;
    let r = v.base;
    for (const t of v.tiers) if (start >= t.start) r = t.price;
    return r;
  };
  const tiers: PriceTier[] = [...starts].sort((a, b) => a - b).map((start) => ({
    above: start,
    inputPerMTok: at(p.input_mtok, start) ?? 0,
    outputPerMTok: at(p.output_mtok, start) ?? 0,
    cacheReadPerMTok: at(p.cache_read_mtok, start) ?? null,
    cacheWritePerMTok: at(p.cache_write_mtok ?? p.cache_write_5m_mtok, start) ?? null,
    cacheWrite1hPerMTok: at(p.cache_write_1h_mtok, start) ?? null,
  }));
  return Object.freeze({
    inputPerMTok: input ?? 0,
    outputPerMTok: output ?? 0,
    cacheReadPerMTok: rate(p.cache_read_mtok) ?? null,
    cacheWritePerMTok: rate(p.cache_write_mtok ?? p.cache_write_5m_mtok) ?? null,
    cacheWrite1hPerMTok: rate(p.cache_write_1h_mtok) ?? null,
    ...(tiers.length > 0 ? { tiers } : {}),
    audioInputPerMTok: rate(p.input_audio_mtok) ?? null,
    audioOutputPerMTok: rate(p.output_audio_mtok) ?? null,
    audioCacheReadPerMTok: rate(p.cache_audio_read_mtok) ?? null,
    imageInputPerMTok: rate(p.input_image_mtok) ?? null,
    imageOutputPerMTok: rate(p.output_image_mtok) ?? null,
    perMinuteUsd: hours === undefined ? null : hours / 60,
    serviceTierMultipliers: DEFAULT_SERVICE_TIERS,
    maxOutputTokens: extra.contextWindow !== null ? Math.min(extra.maxOutputTokens, extra.contextWindow) : extra.maxOutputTokens,
    contextWindow: extra.contextWindow,
    source: 'bundled' as const,
  });
}

function rate(v: BundledPrice[string]): number | undefined {
  if (typeof v === 'number') return v;
  if (v !== undefined && typeof v.base === 'number') return v.base;
  return undefined;
}

const FALLBACK_DATA_VERSION = 'genai-prices@0.1.8';
export type CalcPrice = typeof import('@pydantic/genai-prices').calcPrice;
let calcPriceMemo: CalcPrice | null = null;

/**
 * The bundled price data is 1.6 MB of JavaScript whose source V8 keeps in memory once loaded: it is loaded
 * on the first model it must price (~20 ms, once), not at every start. A gateway whose calls all have user
 * prices never loads it.
 */
function bundledCalcPrice(): CalcPrice {
  calcPriceMemo ??= (createRequire(import.meta.url)('@pydantic/genai-prices') as { calcPrice: CalcPrice }).calcPrice;
  return calcPriceMemo;
}

let dataVersionMemo: string | null = null;

/**
 * genai-prices carries no date or version inside its price data: the data is frozen into each
 * release, so the package version names it. Read from its package.json (its `exports` map hides
 * the file from `import`), once, on first use, so that constructing a PriceBook costs nothing.
 */
function bundledDataVersion(): string {
  if (dataVersionMemo !== null) return dataVersionMemo;
  dataVersionMemo = FALLBACK_DATA_VERSION;
  try {
    const entry = createRequire(import.meta.url).resolve('@pydantic/genai-prices');
    const pkg: unknown = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8'));
    if (pkg !== null && typeof pkg === 'object' && 'version' in pkg && typeof pkg.version === 'string') {
      dataVersionMemo = `genai-prices@${pkg.version}`;
    }
  } catch {
    // Keep the fallback: a missing version must never break billing.
  }
  return dataVersionMemo;
}
