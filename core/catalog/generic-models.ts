/**
 * Generic model names ("claude-sonnet", "gpt-4o", "gemini-flash") and the families they stand for.
 *
 * Each family has two halves. `known` is the bundled list of concrete ids, oldest first, with release
 * dates: the ids genai-prices 0.1.8 prices, dated where the vendor dates its snapshots (a date we
 * could not confirm is null rather than guessed). `parse` recognises members the list has never
 * seen, so a model a provider lists after this file was written still counts, and orders them: it
 * reads the version and date out of the id itself.
 */
import { escapeRegExp } from '../regexp-literal.ts';

/** Where an id sits inside its family. */
export interface FamilyKey {
  /** Numeric version, major first: [3, 5] for claude-3-5-sonnet, [] when the id carries none. */
  readonly version: readonly number[];
  /** Preview and experimental builds rank below a stable build of the same version. */
  readonly preview: boolean;
  /** The date or revision written in the id as a sortable number (20250929, 2 for "-002"); null if none. */
  readonly stamp: number | null;
}

export interface KnownModel {
  readonly id: string;
  /** YYYY-MM-DD, or null when not known for sure. */
  readonly released: string | null;
}

export interface GenericFamily {
  /** Concrete ids, oldest first. */
  readonly known: readonly KnownModel[];
  /** The key of `id` (without any `vendor/` prefix) if it belongs to the family, else null. */
  readonly parse: (id: string) => FamilyKey | null;
}

const num = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s));
const ymd = (y: string | undefined, m: string | undefined, d: string | undefined): number | null =>
  y !== undefined && m !== undefined && d !== undefined ? Number(`${y}${m}${d}`) : null;

/** One model and its dated snapshots, OpenAI style: `o3`, `o3-2025-04-16` (OpenRouter writes `o3-20250416`). */
function snapshots(base: string): GenericFamily['parse'] {
  const re = new RegExp(`^${escapeRegExp(base)}(?:-(\\d{4})-?(\\d{2})-?(\\d{2}))?$`, 'i');
  return (id) => {
    const m = re.exec(id);
    return m ? { version: [], preview: false, stamp: ymd(m[1], m[2], m[3]) } : null;
  };
}

/** A versioned OpenAI series: `gpt-5`, `gpt-5.1`, `gpt-5.4-2026-03-05`; `suffix` picks the size (`-mini`). */
function openaiSeries(major: number, suffix: string): GenericFamily['parse'] {
  const re = new RegExp(`^gpt-${major}(?:\\.(\\d+))?${escapeRegExp(suffix)}(?:-(\\d{4})-?(\\d{2})-?(\\d{2}))?$`, 'i');
  return (id) => {
    const m = re.exec(id);
    return m ? { version: [major, num(m[1]) ?? 0], preview: false, stamp: ymd(m[2], m[3], m[4]) } : null;
  };
}

/**
 * A Claude tier across both naming schemes: `claude-3-5-sonnet-20241022` (version first, until 3.7)
 * and `claude-sonnet-4-5-20250929` (tier first, from 4). Also accepts OpenRouter's dots
 * (`claude-sonnet-4.5`), Vertex's `@20250929` and the `-latest` aliases of the old scheme.
 */
function claude(tier: 'sonnet' | 'opus' | 'haiku'): GenericFamily['parse'] {
  const tierFirst = new RegExp(`^claude-${tier}-(\\d+)(?:[.-](\\d{1,2}))?(?:[-@](\\d{8}))?$`, 'i');
  const versionFirst = new RegExp(`^claude-(\\d+)(?:[.-](\\d{1,2}))?-${tier}(?:[-@](\\d{8})|-latest)?$`, 'i');
  return (id) => {
    const m = tierFirst.exec(id) ?? versionFirst.exec(id);
    if (!m) return null;
    return { version: [Number(m[1]), num(m[2]) ?? 0], preview: false, stamp: m[3] === undefined ? null : Number(m[3]) };
  };
}

/**
 * A Gemini tier: `gemini-2.5-pro`, `gemini-1.5-pro-002`, `gemini-3-pro-preview`,
 * `gemini-2.5-flash-preview-09-2025`. Variants with another purpose (`-tts`, `-image`, `-lite` for
 * the non-lite tiers, `-8b`, `-thinking`) do not match.
 */
function gemini(tier: 'pro' | 'flash' | 'flash-lite'): GenericFamily['parse'] {
  const re = new RegExp(
    `^gemini-(\\d+)(?:\\.(\\d+))?-${tier}(?:-(\\d{3}))?(?:-(preview|exp)(?:-(\\d{2})-(\\d{4}|\\d{2}))?)?(?:-latest)?$`,
    'i',
  );
  return (id) => {
    const m = re.exec(id);
    if (!m) return null;
    let stamp: number | null = null;
    if (m[3] !== undefined) stamp = Number(m[3]);
    // Preview dates come as MM-YYYY (09-2025) or MM-DD with no year (05-20): YYYYMM00 sorts after a
    // bare MMDD, which holds for every pair Google has shipped so far.
    else if (m[5] !== undefined && m[6] !== undefined) stamp = m[6].length === 4 ? Number(`${m[6]}${m[5]}00`) : Number(`${m[5]}${m[6]}`);
    return { version: [Number(m[1]), num(m[2]) ?? 0], preview: m[4] !== undefined, stamp };
  };
}

/** Mistral's YYMM-dated snapshots: `mistral-large-2411`, and the `-latest` alias. */
function mistralDated(base: string): GenericFamily['parse'] {
  const re = new RegExp(`^${escapeRegExp(base)}(?:-(\\d{4})|-latest)?$`, 'i');
  return (id) => {
    const m = re.exec(id);
    return m ? { version: [], preview: false, stamp: m[1] === undefined ? null : Number(m[1]) } : null;
  };
}

const k = (id: string, released: string | null): KnownModel => ({ id, released });

export const GENERIC_MODELS: Readonly<Record<string, GenericFamily>> = {
  'gpt-4o': {
    known: [k('gpt-4o-2024-05-13', '2024-05-13'), k('gpt-4o-2024-08-06', '2024-08-06'), k('gpt-4o-2024-11-20', '2024-11-20')],
    parse: snapshots('gpt-4o'),
  },
  'gpt-4o-mini': { known: [k('gpt-4o-mini-2024-07-18', '2024-07-18')], parse: snapshots('gpt-4o-mini') },
  'gpt-4.1': { known: [k('gpt-4.1-2025-04-14', '2025-04-14')], parse: snapshots('gpt-4.1') },
  'gpt-4.1-mini': { known: [k('gpt-4.1-mini-2025-04-14', '2025-04-14')], parse: snapshots('gpt-4.1-mini') },
  'gpt-4.1-nano': { known: [k('gpt-4.1-nano-2025-04-14', '2025-04-14')], parse: snapshots('gpt-4.1-nano') },
  o1: { known: [k('o1-2024-12-17', '2024-12-17')], parse: snapshots('o1') },
  'o3-mini': { known: [k('o3-mini-2025-01-31', '2025-01-31')], parse: snapshots('o3-mini') },
  o3: { known: [k('o3-2025-04-16', '2025-04-16')], parse: snapshots('o3') },
  'o4-mini': { known: [k('o4-mini-2025-04-16', '2025-04-16')], parse: snapshots('o4-mini') },
  // GPT-5 point releases (5.1, 5.2, ...) are the same series, so `gpt-5` follows them. Variants with
  // another purpose or price class (-pro, -codex, -chat, 5.6-sol/-luna/-terra) are not members.
  'gpt-5': {
    known: [
      k('gpt-5-2025-08-07', '2025-08-07'),
      k('gpt-5.1-2025-11-13', '2025-11-13'),
      k('gpt-5.2-2025-12-11', '2025-12-11'),
      k('gpt-5.4-2026-03-05', '2026-03-05'),
      k('gpt-5.5-2026-04-23', '2026-04-23'),
    ],
    parse: openaiSeries(5, ''),
  },
  'gpt-5-mini': {
    known: [k('gpt-5-mini-2025-08-07', '2025-08-07'), k('gpt-5.4-mini-2026-03-17', '2026-03-17')],
    parse: openaiSeries(5, '-mini'),
  },
  'gpt-5-nano': {
    known: [k('gpt-5-nano-2025-08-07', '2025-08-07'), k('gpt-5.4-nano-2026-03-17', '2026-03-17')],
    parse: openaiSeries(5, '-nano'),
  },
  // From Claude 4.6 on, Anthropic's ids carry no date; the 4.6 release dates are the ones the price
  // data's OpenRouter ids carry (claude-4.6-sonnet-20260217).
  'claude-sonnet': {
    known: [
      k('claude-3-sonnet-20240229', '2024-03-04'),
      k('claude-3-5-sonnet-20240620', '2024-06-20'),
      k('claude-3-5-sonnet-20241022', '2024-10-22'),
      k('claude-3-7-sonnet-20250219', '2025-02-24'),
      k('claude-sonnet-4-20250514', '2025-05-22'),
      k('claude-sonnet-4-5-20250929', '2025-09-29'),
      k('claude-sonnet-4-6', '2026-02-17'),
      k('claude-sonnet-5', null),
    ],
    parse: claude('sonnet'),
  },
  'claude-opus': {
    known: [
      k('claude-3-opus-20240229', '2024-03-04'),
      k('claude-opus-4-20250514', '2025-05-22'),
      k('claude-opus-4-1-20250805', '2025-08-05'),
      k('claude-opus-4-5-20251101', '2025-11-24'),
      k('claude-opus-4-6', '2026-02-05'),
      k('claude-opus-4-7', null),
      k('claude-opus-4-8', null),
      k('claude-opus-5', null),
      k('claude-opus-5-5', null),
    ],
    parse: claude('opus'),
  },
  'claude-haiku': {
    known: [
      k('claude-3-haiku-20240307', '2024-03-13'),
      k('claude-3-5-haiku-20241022', '2024-11-04'),
      k('claude-haiku-4-5-20251001', '2025-10-15'),
    ],
    parse: claude('haiku'),
  },
  'gemini-pro': {
    known: [
      k('gemini-1.0-pro', '2023-12-13'),
      k('gemini-1.5-pro-001', '2024-05-24'),
      k('gemini-1.5-pro-002', '2024-09-24'),
      k('gemini-2.5-pro', '2025-06-17'),
      k('gemini-3-pro-preview', '2025-11-18'),
      k('gemini-3.1-pro-preview', null),
    ],
    parse: gemini('pro'),
  },
  'gemini-flash': {
    known: [
      k('gemini-1.5-flash-001', '2024-05-24'),
      k('gemini-1.5-flash-002', '2024-09-24'),
      k('gemini-2.0-flash-001', '2025-02-05'),
      k('gemini-2.5-flash', '2025-06-17'),
      k('gemini-3-flash-preview', '2025-12-17'),
      k('gemini-3.5-flash', null),
    ],
    parse: gemini('flash'),
  },
  'gemini-flash-lite': {
    known: [k('gemini-2.0-flash-lite-001', '2025-02-25'), k('gemini-2.5-flash-lite', '2025-07-22'), k('gemini-3.1-flash-lite', null)],
    parse: gemini('flash-lite'),
  },
  // DeepSeek's own API serves only moving aliases; the family lets OpenRouter's `deepseek/deepseek-chat` stand in.
  'deepseek-chat': { known: [k('deepseek-chat', null)], parse: snapshots('deepseek-chat') },
  'deepseek-reasoner': { known: [k('deepseek-reasoner', null)], parse: snapshots('deepseek-reasoner') },
  'mistral-large': {
    known: [k('mistral-large-2407', '2024-07-24'), k('mistral-large-2411', '2024-11-18'), k('mistral-large-2512', null)],
    parse: mistralDated('mistral-large'),
  },
};
