/**
 * Bodies being read, checked for silence by one timer per timeout length instead of a timer per request:
 * a `setTimeout` armed and cleared for every call's body cost ~3 µs of the request thread. A body is cut
 * between `idleMs` and `idleMs + idleMs / 10` after its last chunk (at most one second late).
 * Watched bodies sit in `ClearedSlots` (not a `Set`: see cleared-slots.ts).
 */
import { ClearedSlots } from './cleared-slots.ts';

export interface Watched {
  /** performance.now() of the last chunk (or of the start). */
  last: number;
  readonly onSilence: () => void;
  slot: number;
  /** The watch of its timeout length, which `stopWatching` takes it out of. */
  readonly owner: SilenceWatch;
}

class SilenceWatch {
  readonly #idleMs: number;
  readonly #everyMs: number;
  readonly #watched = new ClearedSlots<Watched>();
  #timer: NodeJS.Timeout | null = null;

  constructor(idleMs: number) {
    this.#idleMs = idleMs;
    this.#everyMs = Math.max(5, Math.min(1_000, Math.floor(idleMs / 10)));
  }

  watch(onSilence: () => void): Watched {
    const w: Watched = { last: performance.now(), onSilence, slot: 0, owner: this };
    w.slot = this.#watched.add(w);
    if (this.#timer === null) {
      this.#timer = setInterval(() => this.#sweep(), this.#everyMs);
      this.#timer.unref();
    }
    return w;
  }

  unwatch(w: Watched): void {
    this.#watched.remove(w.slot, w);
  }

  #sweep(): void {
    if (this.#watched.size === 0) {
      // Idle: stop ticking; the next body starts it again.
      if (this.#timer) clearInterval(this.#timer);
      this.#timer = null;
      return;
    }
    const now = performance.now();
    for (const w of this.#watched.items()) {
      if (now - w.last >= this.#idleMs) {
        this.unwatch(w);
        w.onSilence();
      }
    }
  }
}

const watches = new Map<number, SilenceWatch>();

/** Calls `onSilence` once no chunk came for `idleMs`; bump `last` on every chunk, `stopWatching` at the end. */
export function watchSilence(idleMs: number, onSilence: () => void): Watched {
  let w = watches.get(idleMs);
  if (!w) watches.set(idleMs, (w = new SilenceWatch(idleMs)));
  return w.watch(onSilence);
}

export function stopWatching(watched: Watched): void {
  watched.owner.unwatch(watched);
}
