/**
 * A call's cancellation: aborted when its client leaves (or a stopping gateway cuts it), which stops the
 * upstream work. Shaped like `AbortController` (its `signal` is itself), without `EventTarget`: adding and
 * removing the transport's one listener on an `AbortSignal` cost ~0.3 µs a call, this ~0.02.
 */
import type { AbortWatch } from '../upstream/abort-watch.ts';

export class CallAbort implements AbortWatch {
  aborted = false;
  reason: unknown = undefined;
  #listeners: Array<() => void> | null = null;

  /** Itself: code written for an `AbortController` reads `abort.signal`. */
  get signal(): CallAbort {
    return this;
  }

  /** Marks the call aborted and tells each listener once; later calls do nothing. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.#listeners;
    this.#listeners = null;
    if (listeners === null) return;
    for (const listener of listeners) {
      // As with an EventTarget, one failing listener does not keep the others from hearing of the abort.
      try {
        listener();
      } catch (error) {
        process.emitWarning(`an abort listener failed: ${String(error)}`);
      }
    }
  }

  /** Like an `AbortSignal`'s: a listener added after the abort is never called; each runs at most once. */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (this.aborted) return;
    if (this.#listeners === null) this.#listeners = [listener];
    else this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === null) return;
    const i = listeners.indexOf(listener);
    if (i !== -1) listeners.splice(i, 1);
  }
}
