/**
 * The model calls in flight, so a graceful stop can let them finish (drain), cut those still running
 * at the end of its grace period, and close the store only once every call has written its audit row.
 */
import { GatewayError } from '../errors.ts';
import type { RequestContext } from './request-context.ts';
import { ClearedSlots } from './cleared-slots.ts';

/** Why a call was cut: the gateway is stopping. Handlers see an aborted request; the server answers with this. */
export const SHUTDOWN_MESSAGE = 'The gateway is shutting down and cut this call before it finished; retry it once the gateway is back.';

/** A new call refused because a stop began. */
export const refusedWhileDraining = (): GatewayError =>
  new GatewayError({ status: 503, type: 'api_error', code: 'gateway_shutting_down', message: 'The gateway is shutting down; retry in a moment.' });

/** A call in flight cut by a stopping gateway. */
export const cutByShutdown = (): GatewayError => new GatewayError({ status: 503, type: 'api_error', code: 'gateway_shutting_down', message: SHUTDOWN_MESSAGE });

/** The calls in flight, in slots emptied as they leave (see cleared-slots.ts for why not a `Set`). */
export class InflightCalls {
  readonly #calls = new ClearedSlots<RequestContext>();
  #idle: Array<() => void> = [];
  #draining = false;

  /** True once a stop began: new calls are refused with 503. */
  get draining(): boolean {
    return this.#draining;
  }

  get size(): number {
    return this.#calls.size;
  }

  enter(ctx: RequestContext): void {
    ctx.inflightSlot = this.#calls.add(ctx);
  }

  /** Called after the call's audit row was queued. */
  leave(ctx: RequestContext): void {
    if (ctx.inflightSlot === undefined || !this.#calls.remove(ctx.inflightSlot, ctx)) return;
    ctx.inflightSlot = undefined;
    if (this.#calls.size === 0) {
      const waiters = this.#idle;
      this.#idle = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves true when every call finished within `ms`, false when some were still running. */
  async drain(ms: number): Promise<boolean> {
    this.#draining = true;
    if (this.#calls.size === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#idle = this.#idle.filter((w) => w !== done);
        resolve(this.#calls.size === 0);
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
    for (const ctx of this.#calls.items()) {
      ctx.cut = true;
      ctx.abort.abort();
    }
  }
}
