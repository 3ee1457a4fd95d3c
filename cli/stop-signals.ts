/**
 * SIGINT, SIGTERM and SIGHUP for `gateway start`, caught from the entry point's first moments: loading
 * the server's modules and opening the database take a while, and a stop signal in that window used to
 * meet Node's default action (the process dies by the signal: exit 143 in a shell, 1 under npx or a
 * supervisor that maps signal deaths), leaving the start lock and server.json behind. A signal that
 * arrives before the gateway can stop is remembered; `start` checks it at each step and, once it
 * listens, stops as for any signal, exiting 0.
 */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

let installed = false;
let received = 0;
let handler: (() => void) | null = null;

function onSignal(): void {
  received++;
  handler?.();
}

/** What bin/gateway.js installs on its first line, before this module can load. */
interface EarlySignals {
  received: number;
  handler: () => void;
  signals: string[];
}
const EARLY = Symbol.for('gateway.earlyStopSignals');

/** Catches the stop signals from now on (idempotent), taking over the entry point's early catch; until `onStopSignal` they are only remembered. */
export function catchStopSignals(): void {
  if (installed) return;
  installed = true;
  for (const sig of SIGNALS) process.on(sig, onSignal);
  const early = (globalThis as Record<symbol, EarlySignals | undefined>)[EARLY];
  if (early) {
    for (const sig of early.signals) process.off(sig, early.handler);
    received += early.received;
  }
}

/** Whether a stop signal has arrived. */
export function stopRequested(): boolean {
  return received > 0;
}

/** From now on each signal calls `fn`; a signal that arrived before is not replayed (check `stopRequested`). */
export function onStopSignal(fn: () => void): void {
  catchStopSignals();
  handler = fn;
}

/** A stop for a reason other than a signal (the `npx` launcher gone): handled as a signal would be. */
export function stopAsIfSignalled(): void {
  onSignal();
}
