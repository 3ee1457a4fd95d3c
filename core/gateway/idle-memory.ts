/**
 * Gives memory back once the gateway is idle. Under load V8 grows its young generation to 128 MiB and the old
 * one with it, and nothing shrinks them afterwards: an idle process allocates too little to trigger another
 * collection, so a gateway stayed at its peak (~330 MiB after 1,000 streams, with ~30 MiB live) for good. When
 * no call has been in flight for two checks in a row and the heap has grown since the last release, one
 * full collection returns the young generation and the free old-generation pages to the OS.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

interface GcOptions {
  type: 'major' | 'minor';
  execution: 'sync' | 'async';
}
type Gc = (options?: GcOptions) => void;

let gcFn: Gc | null | undefined;

/** V8's `gc()`, without starting Node with `--expose-gc`: the flag applies to contexts created after it is set. */
function exposedGc(): Gc | null {
  if (gcFn !== undefined) return gcFn;
  try {
    v8.setFlagsFromString('--expose-gc');
    const fn = vm.runInNewContext('gc') as unknown;
    gcFn = typeof fn === 'function' ? (fn as Gc) : null;
  } catch {
    gcFn = null;
  }
  return gcFn;
}

export interface IdleMemoryOptions {
  /** True while calls are in flight. */
  busy: () => boolean;
  /** How often to look (default 5 s); a release comes one to two periods after the last call ends. */
  everyMs?: number;
  /** The first look, soon after start (default 250 ms). */
  firstMs?: number;
  /** Heap growth since the last release worth a collection (default 16 MiB). */
  slackBytes?: number;
  /** Called after each release with the heap's size before and after (tests, diagnostics). */
  onRelease?: (before: number, after: number) => void;
}

export interface IdleMemory {
  /** Collects now if the heap grew by the slack since the last release; returns whether it did. */
  releaseIfGrown(): boolean;
  stop(): void;
}

const heapSize = (): number => v8.getHeapStatistics().total_heap_size;

export function releaseMemoryWhenIdle(opts: IdleMemoryOptions): IdleMemory {
  const slack = opts.slackBytes ?? 16 * 1024 * 1024;
  // Zero: the first quiet check after start also releases what loading the modules left behind.
  let afterLastRelease = 0;
  let quietBefore = false;
  const releaseIfGrown = (): boolean => {
    const gc = exposedGc();
    const before = heapSize();
    if (!gc || before < afterLastRelease + slack) return false;
    // A regular full collection, not V8's `last-resort` one (collections that reduce memory, repeated until nothing
    // more is freed): a gateway that had one, even the one at start, stayed slower for good (`process.nextTick`
    // 350-600 ns instead of ~50, eight a call; the request thread up to ~25% slower per call). A regular one
    // gives the young generation back too once allocation has been low for a second or so, as it has by now.
    gc({ type: 'major', execution: 'sync' });
    afterLastRelease = heapSize();
    opts.onRelease?.(before, afterLastRelease);
    return true;
  };
  // Once shortly after start too: loading the modules leaves a young generation of garbage behind.
  const first = setTimeout(() => {
    if (!opts.busy()) releaseIfGrown();
  }, opts.firstMs ?? 250);
  first.unref();
  const timer = setInterval(() => {
    const quiet = !opts.busy();
    if (quiet && quietBefore) releaseIfGrown();
    quietBefore = quiet;
  }, opts.everyMs ?? 5_000);
  timer.unref();
  return {
    releaseIfGrown,
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
