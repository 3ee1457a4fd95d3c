/**
 * The price of one model, flattened to the four token rates the gateway bills. Everything is USD per
 * million tokens, so a row's cost is a handful of multiplications and never needs the price library.
 */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Null when the provider has no cache discount: cache reads are then charged at the input price. */
  cacheReadPerMTok: number | null;
  /** Null when the provider has no separate write rate: cache writes are then charged at the input price. */
  cacheWritePerMTok: number | null;
  /** Where the numbers came from: genai-prices' bundled data, the user's own price, or the demo provider. */
  source: 'bundled' | 'user' | 'demo';
}

/** A price the user sets for a model id (config or `gateway prices set`); cache rates are optional. */
export interface UserPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number | null;
  cacheWritePerMTok?: number | null;
}
