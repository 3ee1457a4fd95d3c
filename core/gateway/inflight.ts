/**
 * The model calls in flight, so a graceful stop can let them finish (drain), cut those still running
 * at the end of its grace period, and close the store only once every call has written its audit row.
 */
import { GatewayError } from '../errors.ts';
import type { RequestContext } from './request-context.ts';

/** Why a call was cut: the gateway is stopping. Handlers see an aborted request; the server answers with this. */
export const SHUTDOWN_MESSAGE = 'The gateway is shutting down and cut this call before it finished; retry it once the gateway is back.';

/** A new call refused because a stop began. */
export const refusedWhileDraining = (): GatewayError =>
  new GatewayError({ status: 503, type: 'api_error', code: 'gateway_shutting_down', message: 'The gateway is shutting down; retry in a moment.' });

/** A call in flight cut by a stopping gateway. */
export const cutByShutdown = (): GatewayError => new GatewayError({ status: 503, type: 'api_error', code: 'gateway_shutting_down', message: SHUTDOWN_MESSAGE });

/**
 * The set of calls in flight, kept in slots that are cleared when a call leaves. Not a `Set`: V8 rebuilds a
 * Set's table as entries come and go, and the tables it leaves behind in the old generation still point at
 * the calls that were in flight then, so every young collection kept those calls (response, bodies, parsed
 * JSON) alive and promoted them: twice the garbage-collection work per call under load.
 */
export class InflightCalls {
  #slots: Array<RequestContext | undefined> = new Array<RequestContext | undefined>(64).fill(undefined);
  /** Indexes of empty slots (small integers: nothing for the collector to follow). */
  #free: number[] = Array.from({ length: 64 }, (_, i) => 63 - i);
  #size = 0;
  #idle: Array<() => void> = [];
  #draining = false;

  /** True once a stop began: new calls are refused with 503. */
  get draining(): boolean {
    return this.#draining;
  }

  get size(): number {
    return this.#size;
  }

  enter(ctx: RequestContext): void {
    if (this.#free.length === 0) this.#grow();
    const i = this.#free.pop() as number;
    this.#slots[i] = ctx;
    ctx.inflightSlot = i;
    this.#size++;
  }

  /** Called after the call's audit row was queued. */
  leave(ctx: RequestContext): void {
    const i = ctx.inflightSlot;
    if (i === undefined || this.#slots[i] !== ctx) return;
    this.#slots[i] = undefined;
    ctx.inflightSlot = undefined;
    this.#free.push(i);
    this.#size--;
    if (this.#size === 0) {
      const waiters = this.#idle;
      this.#idle = [];
      for (const w of waiters) w();
    }
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = old.concat(new Array<RequestContext | undefined>(old.length).fill(undefined));
    // The old array is garbage now; emptied, it cannot keep the calls it held alive until a full collection.
    old.fill(undefined);
    for (let i = this.#slots.length - 1; i >= old.length; i--) this.#free.push(i);
  }

  /** Resolves true when every call finished within `ms`, false when some were still running. */
  async drain(ms: number): Promise<boolean> {
    this.#draining = true;
    if (this.#size === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#idle = this.#idle.filter((w) => w !== done);
        resolve(this.#size === 0);
      }, ms);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#idle.push(done);
    });
  }

  /** Cuts every call still running: each one ends with an error (event) and records its row. */
  cutAll(): void {
    this.#draining = true;
    for (const ctx of this.#slots.filter((c): c is RequestContext => c !== undefined)) {
      ctx.cut = true;
      ctx.abort.abort();
    }
  }
}
