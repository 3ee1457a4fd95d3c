/**
 * Resolves a generic model name ("claude-sonnet") to the newest concrete id some provider serves.
 *
 * The rule, in order:
 *  1. Only generic names (the keys of GENERIC_MODELS, case-insensitive) are resolved. Anything else,
 *     dated or not, returns null and the caller passes it through untouched.
 *  2. If the generic name is itself an id a provider serves (`gpt-4o`), it is returned as is: the
 *     router takes exact ids first, and a vendor's alias already points at its newest snapshot.
 *  3. Otherwise every served id the family recognises is a candidate, bundled or not, bare or behind
 *     one `vendor/` segment (`anthropic/claude-sonnet-4.5` on OpenRouter, `models/gemini-2.5-pro`).
 *     The newest wins, compared by:
 *       a. version (claude-sonnet-4-5 > claude-3-7-sonnet; an id without a version ranks lowest),
 *       b. a stable build over a preview/experimental one of the same version,
 *       c. an id with a date (or revision) in it over an undated alias of the same version: the alias
 *          `claude-sonnet-4-5` is only chosen when no dated 4.5 id is served, so the pinned snapshot
 *          (and its exact price) wins whenever there is one,
 *       d. that date; between undated ids, the bundled release date,
 *       e. a bare id over a `vendor/`-prefixed one (more providers may serve the bare id),
 *       f. the id's text, so the answer never depends on listing order.
 *     A version newer than anything bundled therefore wins as soon as a provider lists it.
 * `available` is treated as a snapshot: pass a new Set when the providers' listings change.
 */
import { GENERIC_MODELS, type FamilyKey, type GenericFamily } from './generic-models.ts';

interface Candidate {
  id: string;
  key: FamilyKey;
  released: number | null;
  prefixed: boolean;
}

interface PreparedFamily {
  parse: GenericFamily['parse'];
  /** Bundled release dates as YYYYMMDD, for ordering ids that carry no date themselves. */
  released: ReadonlyMap<string, number>;
}

const FAMILIES: ReadonlyMap<string, PreparedFamily> = new Map(
  Object.entries(GENERIC_MODELS).map(([name, family]) => [
    name,
    {
      parse: family.parse,
      released: new Map(
        family.known.flatMap((m) => (m.released === null ? [] : [[m.id.toLowerCase(), Number(m.released.replaceAll('-', ''))] as const])),
      ),
    },
  ]),
);

export function isGenericName(name: string): boolean {
  return FAMILIES.has(name.toLowerCase());
}

/**
 * Answers per listing. A scan costs ~60-200 µs over a few hundred ids and generic names arrive on the
 * request path, so each (listing, name) is scanned once. The listing is keyed by identity: callers
 * pass a new Set when their model lists change (the size check only catches careless in-place edits).
 */
const memo = new WeakMap<ReadonlySet<string>, { size: number; answers: Map<string, string | null> }>();

export function resolveGeneric(name: string, available: ReadonlySet<string>): string | null {
  const lower = name.toLowerCase();
  const family = FAMILIES.get(lower);
  if (family === undefined) return null;
  if (available.has(name)) return name;

  let seen = memo.get(available);
  if (seen === undefined || seen.size !== available.size) {
    seen = { size: available.size, answers: new Map() };
    memo.set(available, seen);
  }
  const known = seen.answers.get(lower);
  if (known !== undefined) return known;

  let best: Candidate | null = null;
  for (const id of available) {
    const c = candidate(family, id);
    if (c !== null && (best === null || compare(c, best) < 0)) best = c;
  }
  const answer = best?.id ?? null;
  seen.answers.set(lower, answer);
  return answer;
}

function candidate(family: PreparedFamily, id: string): Candidate | null {
  const slash = id.indexOf('/');
  // One vendor segment at most: `a/b/c` is some other naming scheme.
  if (slash !== id.lastIndexOf('/')) return null;
  const bare = slash === -1 ? id : id.slice(slash + 1);
  const key = family.parse(bare);
  if (key === null) return null;
  return { id, key, released: family.released.get(bare.toLowerCase()) ?? null, prefixed: slash !== -1 };
}

/** Negative when `a` is newer (better) than `b`. */
function compare(a: Candidate, b: Candidate): number {
  return (
    compareVersions(b.key.version, a.key.version) ||
    Number(a.key.preview) - Number(b.key.preview) ||
    Number(b.key.stamp !== null) - Number(a.key.stamp !== null) ||
    (b.key.stamp ?? b.released ?? -1) - (a.key.stamp ?? a.released ?? -1) ||
    Number(a.prefixed) - Number(b.prefixed) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Numeric, part by part; missing parts count as 0 ([4] = [4, 0]), and no version at all is oldest. */
function compareVersions(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || b.length === 0) return a.length === 0 ? (b.length === 0 ? 0 : -1) : 1;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
