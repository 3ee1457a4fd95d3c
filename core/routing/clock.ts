/**
 * Time source for the routing policies. They never read the time themselves, so tests drive them with
 * a manual clock and never sleep.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (or any fixed origin; only differences and display use it). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
