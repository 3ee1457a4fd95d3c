import type { Clock } from '../../core/routing/clock.ts';

/** A clock that moves only when a test says so. */
export class ManualClock implements Clock {
  t: number;

  constructor(t = 1_700_000_000_000) {
    this.t = t;
  }

  now(): number {
    return this.t;
  }

  advance(ms: number): void {
    this.t += ms;
  }
}
