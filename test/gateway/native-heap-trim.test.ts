/**
 * The native trim, in a process of its own (its resident size is the measure): after a collection has freed
 * buffers scattered through glibc's main arena, the memory stays resident until `malloc_trim` gives it back.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('../fixtures/fragmented-heap.mjs', import.meta.url));

describe('trimNativeHeap', () => {
  it.skipIf(process.platform !== 'linux')('gives back the free memory a collection leaves in the arena', () => {
    const out = execFileSync(process.execPath, ['--expose-gc', fixture], { encoding: 'utf8', timeout: 30_000 });
    const r = JSON.parse(out) as { loaded: number; before: number; released: boolean | null; after: number };
    // Freed, but still resident: glibc gives back only the top of its arena, and a kept buffer sits near it.
    expect(r.before).toBeGreaterThan(r.loaded - 32);
    expect(r.released).toBe(true);
    expect(r.after).toBeLessThan(r.before - 96);
  });
});
