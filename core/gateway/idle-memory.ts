/**
 * Gives memory back once the gateway is idle. Under load V8 grows its young generation to 128 MiB and the old
 * one with it, and nothing shrinks them afterwards: an idle process allocates too little to trigger another
 * collection, so a gateway stayed at its peak (~330 MiB after 1,000 streams, with ~30 MiB live) for good. When
 * no call has been in flight for two checks in a row and the heap has grown since the last release, one
 * full collection returns the young generation and the free old-generation pages to the OS, and with it the
 * native memory of the buffers it freed (native-heap-trim.ts).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { trimNativeHeap } from './native-heap-trim.ts';

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
  /** Heap growth since the last release worth a collection (default 16 MiB). */
  slackBytes?: number;
  /** Called after each release with the heap's size before and after (tests, diagnostics). */
  onRelease?: (before: number, after: number) => void;
  /** Gives free native memory back (default: glibc's `malloc_trim`); null where it cannot. */
  trimNative?: () => Promise<boolean | null>;
  /** Called after each trim with its result (tests, diagnostics). */
  onTrim?: (released: boolean | null) => void;
}

export interface IdleMemory {
  /** Collects now if the heap grew by the slack since the last release; returns whether it did. */
  releaseIfGrown(): boolean;
  stop(): void;
}

const heapSize = (): number => v8.getHeapStatistics().total_heap_size;

export function releaseMemoryWhenIdle(opts: IdleMemoryOptions): IdleMemory {
  const slack = opts.slackBytes ?? 16 * 1024 * 1024;
  // Zero: the first quiet spell after start also releases what loading the modules left behind.
  let afterLastRelease = 0;
  let quietBefore = false;
  const releaseIfGrown = (): boolean => {
    const gc = exposedGc();
    const before = heapSize();
    if (!gc || before < afterLastRelease + slack) return false;
    // A regular full collection, not V8's `last-resort` one (memory-reducing collections repeated until nothing
    // more is freed): after one, `process.nextTick` (about eight a call) took 350-700 ns under load instead of
    // ~50-100, measured in the running gateway (the shapes it lost are kept now, tick-shapes.ts, against V8's own
    // memory reducer; the A/B gain was larger than the ticks explain, so the regular collection stays). A regular
    // one gives the young generation back too once allocation has been low for a second or so, as it has after
    // two quiet checks.
    gc({ type: 'major', execution: 'sync' });
    afterLastRelease = heapSize();
    opts.onRelease?.(before, afterLastRelease);
    // The collection has just freed the native memory of the buffers it found dead: give the C library's free
    // pages back now, while nothing runs (the trim holds the allocator's locks for the few ms it takes).
    void (opts.trimNative ?? trimNativeHeap)().then(
      (released) => opts.onTrim?.(released),
      () => opts.onTrim?.(null),
    );
    return true;
  };
  // None at start (there was one 250 ms in): a regular collection then, amid start-up's allocation, gave back
  // nothing (idle RSS 83 MiB with it, 81-82 without), and with it `process.nextTick` stayed slow under load.
  const timer = setInterval(() => {
    const quiet = !opts.busy();
    if (quiet && quietBefore) releaseIfGrown();
    quietBefore = quiet;
  }, opts.everyMs ?? 5_000);
  timer.unref();
  return {
    releaseIfGrown,
    stop: () => {
      clearInterval(timer);
    },
  };
}
