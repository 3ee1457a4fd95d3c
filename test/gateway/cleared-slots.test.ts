/** Slots that hold per-request objects: add, remove once, grow past the first size, iterate a copy. */
import { describe, expect, it } from 'vitest';
import { ClearedSlots } from '../../core/gateway/cleared-slots.ts';

describe('ClearedSlots', () => {
  it('holds what was added until it is removed, once, and grows past its first size', () => {
    const s = new ClearedSlots<{ n: number }>();
    const items = Array.from({ length: 40 }, (_, n) => ({ n }));
    const slots = items.map((x) => s.add(x));
    expect(s.size).toBe(40);
    expect(new Set(slots).size).toBe(40);
    for (let i = 0; i < 40; i += 2) expect(s.remove(slots[i], items[i])).toBe(true);
    expect(s.remove(slots[0], items[0])).toBe(false);
    expect(s.size).toBe(20);
    expect(s.items().map((x) => x.n).sort((a, b) => a - b)).toEqual(items.filter((x) => x.n % 2 === 1).map((x) => x.n));
    // A freed slot taken by another object is not emptied by the old one's late removal.
    const late = { n: 99 };
    const reused = s.add(late);
    expect(s.remove(reused, items[0])).toBe(false);
    expect(s.items()).toContain(late);
    // Removing while iterating the copy is safe.
    for (const x of s.items()) s.remove(slots[x.n] ?? reused, x);
    expect(s.size).toBe(0);
    expect(s.items()).toEqual([]);
  });
});
