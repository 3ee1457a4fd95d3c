/**
 * A value that one store answers at once (SQLite, in process) and another later (PostgreSQL, Redis).
 * The hot path keeps SQLite's answers synchronous: `then` applies a step without a microtask when the
 * value is already there, so the one-machine gateway pays no await for team mode's sake.
 */
export type Awaitable<T> = T | Promise<T>;

export function isPromise<T>(v: Awaitable<T>): v is Promise<T> {
  return v instanceof Promise;
}

/** `f(v)` now when `v` is a value, after it resolves when it is a promise. */
export function andThen<T, U>(v: Awaitable<T>, f: (value: T) => Awaitable<U>): Awaitable<U> {
  return isPromise(v) ? v.then(f) : f(v);
}
