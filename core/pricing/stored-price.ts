/** A price row the user set (`gateway prices set`) as the price book's input. */
import type { UserPrice as StoredPrice } from '../storage/prices-repo.ts';
import { DEFAULT_SERVICE_TIERS } from './builtin-prices.ts';
import type { UserPrice } from './price.ts';

export function fromStoredPrice(p: StoredPrice): UserPrice {
  const x = p.extra;
  const tiers: Record<string, number> = { ...DEFAULT_SERVICE_TIERS };
  if (x.priorityMultiplier !== undefined) tiers.priority = x.priorityMultiplier;
  if (x.flexMultiplier !== undefined) tiers.flex = x.flexMultiplier;
  return {
    inputPerMTok: p.inputPerMtok,
    outputPerMTok: p.outputPerMtok,
    cacheReadPerMTok: p.cacheReadPerMtok,
    cacheWritePerMTok: p.cacheWritePerMtok,
    cacheWrite1hPerMTok: x.cacheWrite1hPerMtok ?? null,
    audioInputPerMTok: x.audioInputPerMtok ?? null,
    audioOutputPerMTok: x.audioOutputPerMtok ?? null,
    imageInputPerMTok: x.imageInputPerMtok ?? null,
    imageOutputPerMTok: x.imageOutputPerMtok ?? null,
    perMinuteUsd: x.perMinuteUsd ?? null,
    perImageUsd: x.perImageUsd === undefined ? null : { '*': x.perImageUsd },
    serviceTierMultipliers: tiers,
    maxOutputTokens: x.maxOutputTokens ?? null,
    tierAbove: x.tierAbove ?? null,
    tierInputPerMTok: x.tierInputPerMtok ?? null,
    tierOutputPerMTok: x.tierOutputPerMtok ?? null,
  };
}
