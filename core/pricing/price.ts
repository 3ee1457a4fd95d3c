/**
 * The price of one model, resolved once and cached, so a row's cost is a handful of multiplications
 * and never needs the price library. Token rates are USD per million tokens.
 */

/** The token rates that change with the prompt's size (long-context tiers). */
export interface TokenRates {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Null when the provider has no cache discount: cache reads are then charged at the input price. */
  cacheReadPerMTok: number | null;
  /** Null when the provider has no separate write rate: cache writes are then charged at the input price. */
  cacheWritePerMTok: number | null;
  /** Anthropic's 1-hour cache writes; null: twice the input rate (Anthropic's published ratio). */
  cacheWrite1hPerMTok?: number | null;
}

/** A long-context tier: every token of a call whose prompt is larger than `above` tokens pays these rates. */
export interface PriceTier extends TokenRates {
  above: number;
}

/** Where a price came from, for `gateway prices` and the audit trail. */
export type PriceSource = 'bundled' | 'user' | 'demo' | 'builtin';

export interface ModelPrice extends TokenRates {
  /** Ascending by `above`; absent when the model has one flat price. */
  tiers?: readonly PriceTier[];
  /** Audio and image token rates; null or absent: those tokens cost the text rate. */
  audioInputPerMTok?: number | null;
  audioOutputPerMTok?: number | null;
  audioCacheReadPerMTok?: number | null;
  imageInputPerMTok?: number | null;
  imageOutputPerMTok?: number | null;
  /** USD per minute of audio (whisper-1); used when the upstream reports no tokens. */
  perMinuteUsd?: number | null;
  /** USD per image by `size|quality` (`1024x1024|hd`), with `*` entries as fallbacks; used when no tokens are reported. */
  perImageUsd?: Readonly<Record<string, number>> | null;
  /** Multipliers of the whole cost by `service_tier` the upstream reports (`priority`, `flex`). */
  serviceTierMultipliers?: Readonly<Record<string, number>> | null;
  /** The model's own output limit, when the price data or our table knows it. */
  maxOutputTokens?: number | null;
  /**
   * The answer echoes the prompt plus this many tokens at most (the offline demo model: "Demo reply
   * to: <your text>"), so its worst case follows the prompt rather than a fixed limit.
   */
  echoOverheadTokens?: number | null;
  contextWindow?: number | null;
  source: PriceSource;
}

/** A price the user sets for a model id (config or `gateway prices set`); only input and output are required. */
export interface UserPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number | null;
  cacheWritePerMTok?: number | null;
  cacheWrite1hPerMTok?: number | null;
  audioInputPerMTok?: number | null;
  audioOutputPerMTok?: number | null;
  imageInputPerMTok?: number | null;
  imageOutputPerMTok?: number | null;
  perMinuteUsd?: number | null;
  /** One price for any image, or per `size|quality`. */
  perImageUsd?: Readonly<Record<string, number>> | null;
  serviceTierMultipliers?: Readonly<Record<string, number>> | null;
  maxOutputTokens?: number | null;
  /** Above this many prompt tokens, `tierInputPerMTok`/`tierOutputPerMTok` apply to the whole call. */
  tierAbove?: number | null;
  tierInputPerMTok?: number | null;
  tierOutputPerMTok?: number | null;
}
