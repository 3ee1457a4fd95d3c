import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { GENERIC_MODELS } from '../../core/catalog/generic-models.ts';
import { isGenericName, resolveGeneric } from '../../core/catalog/resolve-generic.ts';

const set = (...ids: string[]): ReadonlySet<string> => new Set(ids);

describe('resolveGeneric', () => {
  it('newest wins, whatever the listing order', () => {
    const ids = ['claude-3-7-sonnet-20250219', 'claude-sonnet-4-5-20250929', 'claude-3-5-sonnet-20241022', 'claude-sonnet-4-20250514'];
    expect(resolveGeneric('claude-sonnet', set(...ids))).toBe('claude-sonnet-4-5-20250929');
    expect(resolveGeneric('claude-sonnet', set(...ids.reverse()))).toBe('claude-sonnet-4-5-20250929');
    expect(resolveGeneric('gpt-4o', set('gpt-4o-2024-08-06', 'gpt-4o-2024-11-20', 'gpt-4o-2024-05-13', 'gpt-4o-mini'))).toBe('gpt-4o-2024-11-20');
    expect(resolveGeneric('claude-opus', set('claude-3-opus-20240229', 'claude-opus-4-1-20250805', 'claude-opus-4-20250514'))).toBe('claude-opus-4-1-20250805');
    expect(resolveGeneric('claude-haiku', set('claude-3-haiku-20240307', 'claude-3-5-haiku-20241022'))).toBe('claude-3-5-haiku-20241022');
  });

  it('versions compare as numbers, not text', () => {
    expect(resolveGeneric('gemini-pro', set('gemini-2.5-pro', 'gemini-1.5-pro-002', 'gemini-10.0-pro'))).toBe('gemini-10.0-pro');
    expect(resolveGeneric('gpt-5', set('gpt-5-2025-08-07', 'gpt-5.10', 'gpt-5.2-2025-12-11'))).toBe('gpt-5.10');
    // claude-sonnet-4 (= 4.0) is older than 4.5 even though its date is written in the same slot
    expect(resolveGeneric('claude-sonnet', set('claude-sonnet-4-20250514', 'claude-sonnet-4-5'))).toBe('claude-sonnet-4-5');
  });

  it('only chooses ids that are available', () => {
    expect(resolveGeneric('claude-sonnet', set('claude-3-5-sonnet-20240620', 'gpt-4o'))).toBe('claude-3-5-sonnet-20240620');
    expect(resolveGeneric('gemini-flash', set('gemini-1.5-flash-002', 'gemini-2.0-flash-001'))).toBe('gemini-2.0-flash-001');
    expect(resolveGeneric('claude-sonnet', set('gpt-4o', 'gemini-2.5-pro'))).toBeNull();
    expect(resolveGeneric('claude-sonnet', set())).toBeNull();
  });

  it('a newer id seen only in provider listings beats the bundled list', () => {
    const bundledNewest = GENERIC_MODELS['claude-sonnet'].known.at(-1)!.id;
    const listed = set('claude-sonnet-4-5-20250929', bundledNewest, 'claude-sonnet-9-1-20300101');
    expect(GENERIC_MODELS['claude-sonnet'].known.some((m) => m.id === 'claude-sonnet-9-1-20300101')).toBe(false);
    expect(resolveGeneric('claude-sonnet', listed)).toBe('claude-sonnet-9-1-20300101');
    expect(resolveGeneric('gpt-4o', set('gpt-4o-2024-11-20', 'gpt-4o-2027-01-01'))).toBe('gpt-4o-2027-01-01');
    expect(resolveGeneric('gemini-flash', set('gemini-2.5-flash', 'gemini-9.5-flash'))).toBe('gemini-9.5-flash');
  });

  it('dated and other concrete names pass through (null)', () => {
    const all = set('claude-sonnet-4-5-20250929', 'claude-sonnet-4-5', 'gpt-4o-2024-11-20');
    expect(resolveGeneric('claude-sonnet-4-5-20250929', all)).toBeNull();
    expect(resolveGeneric('claude-sonnet-4-5', all)).toBeNull();
    expect(resolveGeneric('gpt-4o-2024-08-06', all)).toBeNull();
    expect(resolveGeneric('anthropic/claude-sonnet', all)).toBeNull();
  });

  it('unknown names → null', () => {
    expect(resolveGeneric('llama', set('llama3', 'llama3.1'))).toBeNull();
    expect(resolveGeneric('constructor', set('x'))).toBeNull();
    expect(resolveGeneric('', set('x'))).toBeNull();
    expect(isGenericName('claude-sonnet')).toBe(true);
    expect(isGenericName('claude-sonnet-4-5')).toBe(false);
  });

  it('an undated alias is a candidate; a dated id of the same version is preferred to it', () => {
    expect(resolveGeneric('claude-sonnet', set('claude-sonnet-4-5', 'claude-3-7-sonnet-20250219'))).toBe('claude-sonnet-4-5');
    expect(resolveGeneric('claude-sonnet', set('claude-sonnet-4-5', 'claude-sonnet-4-5-20250929'))).toBe('claude-sonnet-4-5-20250929');
    expect(resolveGeneric('claude-sonnet', set('claude-3-7-sonnet-latest', 'claude-3-5-sonnet-20241022'))).toBe('claude-3-7-sonnet-latest');
  });

  it('a generic name that is itself served stays as it is', () => {
    expect(resolveGeneric('gpt-4o', set('gpt-4o', 'gpt-4o-2024-11-20'))).toBe('gpt-4o');
    expect(resolveGeneric('deepseek-chat', set('deepseek-chat'))).toBe('deepseek-chat');
  });

  it('does not confuse neighbouring families or purpose variants', () => {
    const ids = set('gpt-4o-mini-2024-07-18', 'gpt-4o-realtime-preview-2024-12-17', 'gpt-4o-audio-preview', 'chatgpt-4o-latest');
    expect(resolveGeneric('gpt-4o', ids)).toBeNull();
    expect(resolveGeneric('gpt-4o-mini', ids)).toBe('gpt-4o-mini-2024-07-18');
    expect(resolveGeneric('o3', set('o3-mini-2025-01-31', 'o3-pro', 'o3-deep-research'))).toBeNull();
    expect(resolveGeneric('gpt-5', set('gpt-5.5-pro', 'gpt-5.4-mini', 'gpt-5.3-codex', 'gpt-5.6-sol', 'gpt-5-2025-08-07'))).toBe('gpt-5-2025-08-07');
    expect(resolveGeneric('gemini-flash', set('gemini-2.5-flash-lite', 'gemini-2.5-flash-image', 'gemini-2.5-flash-preview-tts', 'gemini-2.0-flash-001'))).toBe(
      'gemini-2.0-flash-001',
    );
    expect(resolveGeneric('gemini-flash-lite', set('gemini-2.5-flash-lite', 'gemini-2.5-flash'))).toBe('gemini-2.5-flash-lite');
    expect(resolveGeneric('claude-sonnet', set('anthropic/claude-sonnet-4.5:beta', 'claude-opus-4-1-20250805'))).toBeNull();
  });

  it('prefers a stable build to a preview of the same version, but a newer version even in preview', () => {
    expect(resolveGeneric('gemini-flash', set('gemini-2.5-flash', 'gemini-2.5-flash-preview-09-2025'))).toBe('gemini-2.5-flash');
    expect(resolveGeneric('gemini-pro', set('gemini-2.5-pro', 'gemini-3-pro-preview'))).toBe('gemini-3-pro-preview');
    expect(resolveGeneric('gemini-pro', set('gemini-2.5-pro-preview-03-25', 'gemini-2.5-pro-preview-06-05'))).toBe('gemini-2.5-pro-preview-06-05');
  });

  it('answers per listing: a new listing (or a grown one) is scanned again', () => {
    const listing = new Set(['claude-sonnet-4-5-20250929']);
    expect(resolveGeneric('claude-sonnet', listing)).toBe('claude-sonnet-4-5-20250929');
    expect(resolveGeneric('Claude-Sonnet', listing)).toBe('claude-sonnet-4-5-20250929');
    const refreshed = new Set([...listing, 'claude-sonnet-4-6']);
    expect(resolveGeneric('claude-sonnet', refreshed)).toBe('claude-sonnet-4-6');
    listing.add('claude-sonnet-5');
    expect(resolveGeneric('claude-sonnet', listing)).toBe('claude-sonnet-5');
  });

  it('understands vendor-prefixed listings (OpenRouter, Gemini `models/`), preferring bare ids on a tie', () => {
    const openrouter = set('anthropic/claude-3.7-sonnet', 'anthropic/claude-sonnet-4.5', 'openai/gpt-4o-2024-11-20');
    expect(resolveGeneric('claude-sonnet', openrouter)).toBe('anthropic/claude-sonnet-4.5');
    expect(resolveGeneric('gpt-4o', openrouter)).toBe('openai/gpt-4o-2024-11-20');
    expect(resolveGeneric('gemini-pro', set('models/gemini-2.5-pro', 'models/gemini-1.5-pro-002'))).toBe('models/gemini-2.5-pro');
    expect(resolveGeneric('claude-sonnet', set('anthropic/claude-sonnet-4-5-20250929', 'claude-sonnet-4-5-20250929'))).toBe('claude-sonnet-4-5-20250929');
  });
});

describe('bundled families', () => {
  it('every bundled id belongs to its family and the list is ordered oldest first', () => {
    for (const [name, family] of Object.entries(GENERIC_MODELS)) {
      for (const m of family.known) expect(family.parse(m.id), `${name}: ${m.id}`).not.toBeNull();
      // Offering the bundled ids one by one, each newer one must take over.
      const seen = new Set<string>();
      for (const m of family.known) {
        seen.add(m.id);
        expect(resolveGeneric(name, seen), `${name} after adding ${m.id}`).toBe(name === m.id ? name : m.id);
      }
    }
  });

  it('release dates are real dates and never go backwards', () => {
    for (const [name, family] of Object.entries(GENERIC_MODELS)) {
      const dates = family.known.flatMap((m) => (m.released === null ? [] : [m.released]));
      for (const d of dates) expect(new Date(`${d}T00:00:00Z`).toISOString().slice(0, 10), `${name}: ${d}`).toBe(d);
      expect(dates, name).toEqual([...dates].sort());
    }
  });

  it('genai-prices knows every bundled id, so a resolved generic name is always priced', () => {
    for (const family of Object.values(GENERIC_MODELS)) {
      for (const m of family.known) expect(calcPrice({ input_tokens: 0 }, m.id), m.id).not.toBeNull();
    }
  });
});
