/**
 * Keeps alive the hidden classes (V8 maps) of `process.nextTick`'s queue entries. Between loads no tick is
 * queued, so nothing holds those maps; a memory-reducing collection (V8's memory reducer, which runs after an
 * idle spell, or a `last-resort` gc) frees them and clears the type feedback that named them. `nextTick` and the
 * loop that runs the ticks were then left on generic paths for good: under load a tick took ~350 ns instead of
 * ~40, for the rest of the process's life. A call has about eight (Node's HTTP streams), so ~2-3 us of CPU per
 * call in the benchmark's setup, more in the demo, whose upstream shares the process. Entries that stay
 * referenced keep their maps, and the feedback, valid.
 *
 * The entries are caught with an async `init` hook, enabled only while a few ticks of each argument count are
 * queued at start; the hook's resource for a tick is the queue entry itself.
 */
import { createHook } from 'node:async_hooks';

let kept: readonly object[] | null = null;

/** Queues one tick of each argument count nextTick builds differently and keeps their entries; idempotent. */
export function keepTickShapes(): readonly object[] {
  if (kept) return kept;
  const entries: object[] = [];
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') entries.push(resource);
    },
  });
  const noop = (): void => {};
  // An object argument, as Node's streams pass (the args array's elements kind matches theirs).
  const arg = {};
  hook.enable();
  try {
    process.nextTick(noop);
    process.nextTick(noop, arg);
    process.nextTick(noop, arg, arg);
    process.nextTick(noop, arg, arg, arg);
    process.nextTick(noop, arg, arg, arg, arg);
  } finally {
    hook.disable();
  }
  kept = entries;
  return kept;
}
