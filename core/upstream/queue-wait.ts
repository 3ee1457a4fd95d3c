/**
 * Who hears that an upstream call waited for a free pooled connection. The server installs a reporter
 * per request (it adds `x-gateway-queued-ms` and logs a line); the transport only reports the wait, so
 * it knows nothing about HTTP responses.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type QueueWaitReporter = (waitedMs: number, origin: string) => void;

export const queueWaitReporter = new AsyncLocalStorage<QueueWaitReporter>();
