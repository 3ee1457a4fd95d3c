/**
 * One request to a provider as undici's dispatcher sees it: the handler that turns its callbacks into
 * the answer's status and headers (or the error before them) and an `UpstreamBody` fed as chunks come.
 * The caller's abort signal aborts the request at any point, before or after the headers.
 */
import type { Dispatcher } from 'undici';
import type { AbortWatch } from './abort-watch.ts';
import { UpstreamBody } from './upstream-body.ts';

export interface UpstreamAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

export class UpstreamCallHandler implements Dispatcher.DispatchHandler {
  readonly #resolve: (a: UpstreamAnswer) => void;
  readonly #reject: (err: unknown) => void;
  readonly #release: () => void;
  readonly #signal: AbortWatch | undefined;
  #controller: Dispatcher.DispatchController | null = null;
  #body: UpstreamBody | null = null;
  #settled = false;
  readonly #onAbort = (): void => {
    if (this.#controller) this.#controller.abort(this.#abortReason());
    else this.#fail(this.#abortReason());
  };

  /** `release` runs once, when the connection is free again (answer read, failed, or dropped). */
  constructor(resolve: (a: UpstreamAnswer) => void, reject: (err: unknown) => void, release: () => void, signal?: AbortWatch) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#release = release;
    this.#signal = signal;
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#settled) controller.abort(this.#abortReason());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#body = new UpstreamBody(controller, () => this.#finish());
    this.#resolve({ status: statusCode, headers, body: this.#body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#body?.push(chunk);
  }

  onResponseEnd(): void {
    this.#body?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.#body) this.#body.fail(err);
    else this.#fail(err);
  }

  /** The request failed before its headers came (or could not be dispatched). */
  fail(err: unknown): void {
    this.#fail(err);
  }

  #fail(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#finish();
    this.#reject(err);
  }

  #abortReason(): Error {
    return (this.#signal?.reason as Error | undefined) ?? new Error('aborted');
  }

  #finish(): void {
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#release();
  }
}
