/**
 * keepTickShapes: the kept entries are nextTick's queue entries, and after a memory-reducing collection a tick
 * queued under load still gets the very map (hidden class) the kept entry holds, so the feedback that names it
 * stays valid. The map check needs V8's natives syntax, so it runs in a child Node.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { keepTickShapes } from '../../core/gateway/tick-shapes.ts';

const moduleUrl = new URL('../../core/gateway/tick-shapes.ts', import.meta.url).href;

describe('keepTickShapes', () => {
  it('keeps one queue entry per argument count nextTick builds, once', () => {
    const kept = keepTickShapes();
    expect(kept.length).toBe(5);
    for (const entry of kept) {
      expect(typeof (entry as { callback?: unknown }).callback).toBe('function');
      // The async ids live under symbol keys.
      expect(Object.getOwnPropertySymbols(entry).length).toBeGreaterThanOrEqual(2);
    }
    expect((kept[2] as { args?: unknown[] }).args).toHaveLength(2);
    expect(keepTickShapes()).toBe(kept);
  });

  it('a tick queued after a memory-reducing collection has the kept entry’s map', () => {
    const script = `
      import { createHook } from 'node:async_hooks';
      import { keepTickShapes } from ${JSON.stringify(moduleUrl)};
      const kept = keepTickShapes();
      const o = {};
      const run = (n) => new Promise((done) => { let i = 0; const f = () => (++i < n ? process.nextTick(f, o, o) : done()); f(); });
      await run(200000);
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      await run(200000);
      let fresh;
      const hook = createHook({ init(id, type, trigger, resource) { if (type === 'TickObject') fresh ??= resource; } });
      hook.enable();
      process.nextTick(() => {}, o, o);
      hook.disable();
      console.log(JSON.stringify({ same: %HaveSameMap(kept[2], fresh), kept: kept.length }));
    `;
    const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).not.toMatch(/Error/);
    expect(JSON.parse(r.stdout.trim())).toEqual({ same: true, kept: 5 });
  });
});
