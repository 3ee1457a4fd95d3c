/**
 * The idle memory release: a real V8 collection that shrinks the heap once the garbage of a load is gone,
 * only when no call is in flight, and not again until the heap has grown by the slack.
 */
import v8 from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseMemoryWhenIdle } from '../../core/gateway/idle-memory.ts';
import type { IdleMemory } from '../../core/gateway/idle-memory.ts';

const MiB = 1024 * 1024;
let sink: unknown[] = [];

/** What a load leaves behind: a young generation grown to its maximum, full of garbage. */
function churn(): void {
  for (let i = 0; i < 2_000_000; i++) {
    const o = { i, s: `chunk ${i}`, a: [i] };
    if (i % 50 === 0) sink.push(o);
  }
  sink = [];
}

const releasers: IdleMemory[] = [];
afterEach(() => {
  for (const r of releasers.splice(0)) r.stop();
});

describe('releaseMemoryWhenIdle', () => {
  it('gives the heap back after a load and a quiet spell, then waits for it to grow by the slack', async () => {
    const r = releaseMemoryWhenIdle({ busy: () => false, everyMs: 60_000, slackBytes: 8 * MiB });
    releasers.push(r);
    churn();
    // The gateway releases after two quiet checks (5 s apart by default); V8 gives the young generation back
    // only once allocation has been low for a while (~1.5 s here), which a regular collection then does.
    await new Promise((res) => setTimeout(res, 2_500));
    const before = v8.getHeapStatistics().total_heap_size;
    expect(r.releaseIfGrown()).toBe(true);
    const after = v8.getHeapStatistics().total_heap_size;
    expect(after).toBeLessThan(before - 8 * MiB);
    // Nothing grew since: no second collection.
    expect(r.releaseIfGrown()).toBe(false);
  });

  it('never collects while a call is in flight, and does once the gateway has been quiet for two checks', async () => {
    let busy = true;
    let checks = 0;
    const released: number[] = [];
    const r = releaseMemoryWhenIdle({
      busy: () => {
        checks++;
        return busy;
      },
      everyMs: 10,
      slackBytes: 1,
      onRelease: (_before, after) => released.push(after),
    });
    releasers.push(r);
    churn();
    while (checks < 5) await new Promise((res) => setTimeout(res, 10));
    expect(released).toEqual([]);
    busy = false;
    const quietFrom = checks;
    while (released.length === 0) await new Promise((res) => setTimeout(res, 10));
    expect(checks - quietFrom).toBeGreaterThanOrEqual(2);
  });

  it('gives the native memory back right after each release, and not without one', async () => {
    let trims = 0;
    const results: Array<boolean | null> = [];
    const r = releaseMemoryWhenIdle({
      busy: () => false,
      everyMs: 60_000,
      slackBytes: 8 * MiB,
      trimNative: async () => {
        trims++;
        return true;
      },
      onTrim: (released) => results.push(released),
    });
    releasers.push(r);
    churn();
    await new Promise((res) => setTimeout(res, 2_500));
    expect(r.releaseIfGrown()).toBe(true);
    await new Promise((res) => setImmediate(res));
    expect(results).toEqual([true]);
    expect(r.releaseIfGrown()).toBe(false);
    await new Promise((res) => setImmediate(res));
    expect(trims).toBe(1);
  });
});
