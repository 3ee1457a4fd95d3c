/**
 * What the transport needs of a cancellation: whether it happened, why, and a listener. `AbortSignal` has
 * all of it; so does the gateway's cheaper per-call `CallAbort` (core/gateway/call-abort.ts).
 */
export interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
