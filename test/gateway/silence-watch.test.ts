/** One timer per timeout length watches every body being read: silence is noticed, activity and stops are not. */
import { describe, expect, it } from 'vitest';
import { stopWatching, watchSilence } from '../../core/gateway/silence-watch.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('watchSilence', () => {
  it('calls back once a body has been silent for the timeout, not before', async () => {
    const started = performance.now();
    let firedAt = 0;
    watchSilence(100, () => (firedAt = performance.now()));
    await sleep(60);
    expect(firedAt).toBe(0);
    await sleep(120);
    expect(firedAt - started).toBeGreaterThanOrEqual(100);
    // At most a tenth of the timeout late (plus the event loop's own slack).
    expect(firedAt - started).toBeLessThan(100 + 10 + 40);
  });

  it('a chunk restarts the wait; a stopped watch never fires', async () => {
    let active = 0;
    let stopped = 0;
    const a = watchSilence(80, () => active++);
    const b = watchSilence(80, () => stopped++);
    stopWatching(b);
    for (let i = 0; i < 5; i++) {
      await sleep(30);
      a.last = performance.now();
    }
    expect(active).toBe(0);
    await sleep(130);
    expect(active).toBe(1);
    expect(stopped).toBe(0);
  });

  it('many bodies at once: only the silent ones are cut', async () => {
    const fired: number[] = [];
    const watched = Array.from({ length: 50 }, (_, i) => watchSilence(60, () => fired.push(i)));
    for (let t = 0; t < 4; t++) {
      await sleep(25);
      for (let i = 0; i < 50; i += 2) watched[i].last = performance.now();
    }
    for (let i = 0; i < 50; i += 2) stopWatching(watched[i]);
    expect(fired.length).toBe(25);
    expect(fired.every((i) => i % 2 === 1)).toBe(true);
  });
});
