/**
 * Model resolution, in DESIGN's order: an exact id some provider serves; a user alias; a generic
 * name (newest version); `provider/model` split at the first `/` when that provider exists.
 */
import { resolveGeneric } from '../catalog/resolve-generic.ts';
import type { Strategy } from '../routing/strategy.ts';
import type { LiveConfig, RuntimeProvider } from './live-config.ts';

export interface Candidate {
  provider: string;
  runtime: RuntimeProvider;
  /** The model id as this provider names it. */
  model: string;
  priority: number;
  seq: number;
}

export interface Resolution {
  candidates: Candidate[];
  /** Set when an alias chose its own strategy. */
  strategy: Strategy | null;
  via: 'exact' | 'alias' | 'generic' | 'provider-prefix';
}

const candidate = (runtime: RuntimeProvider, model: string): Candidate => ({
  provider: runtime.settings.name,
  runtime,
  model,
  priority: runtime.settings.priority,
  seq: runtime.settings.seq,
});

export function resolveModel(requested: string, live: LiveConfig): Resolution | null {
  const exact = live.modelIndex.get(requested);
  if (exact) return { candidates: exact.map((p) => candidate(p, requested)), strategy: null, via: 'exact' };

  const alias = live.aliases.get(requested);
  if (alias) {
    const candidates: Candidate[] = [];
    for (const t of alias.targets) {
      const p = live.providersByName.get(t.provider);
      // An alias's targets are ordered: its own order is the priority (and the tie-break for
      // cheapest/fastest), not the providers' global priorities.
      if (p) candidates.push({ ...candidate(p, t.model), priority: candidates.length, seq: candidates.length });
    }
    if (candidates.length > 0) return { candidates, strategy: alias.strategy, via: 'alias' };
  }

  const generic = resolveGeneric(requested, live.allModels);
  if (generic) {
    const providers = live.modelIndex.get(generic);
    if (providers) return { candidates: providers.map((p) => candidate(p, generic)), strategy: null, via: 'generic' };
  }

  const slash = requested.indexOf('/');
  if (slash > 0) {
    const p = live.providersByName.get(requested.slice(0, slash));
    const model = requested.slice(slash + 1);
    if (p && model) return { candidates: [candidate(p, model)], strategy: null, via: 'provider-prefix' };
  }
  return null;
}
