/**
 * Who hears that an upstream call waited for a free pooled connection. The server gives each call a
 * reporter (it adds `x-gateway-queued-ms` and logs a line); the transport only reports the wait, so it
 * knows nothing about HTTP responses.
 *
 * Passed by hand, not through an AsyncLocalStorage: on Node 24 every async resource keeps the context it
 * was created in, so an upstream socket opened during a call kept that call's response, request and
 * bodies alive for as long as the pooled socket lived.
 */
export type QueueWaitReporter = (waitedMs: number, origin: string) => void;
