/**
 * Objects held in an array by index, each slot emptied the moment its object leaves. Not a `Set` for
 * per-request objects: V8 rebuilds a Set's table as entries come and go, and the tables it leaves behind in
 * the old generation still point at what was there, so young collections kept departed requests (responses,
 * bodies, parsed JSON) alive and promoted them. Here a grown-out array is emptied before it is dropped.
 */
export class ClearedSlots<T> {
  #slots: Array<T | undefined> = new Array<T | undefined>(16).fill(undefined);
  /** Indexes of empty slots (small integers: nothing for the collector to follow). */
  #free: number[] = Array.from({ length: 16 }, (_, i) => 15 - i);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Holds `item`; returns its slot, for `remove`. */
  add(item: T): number {
    if (this.#free.length === 0) this.#grow();
    const i = this.#free.pop() as number;
    this.#slots[i] = item;
    this.#size++;
    return i;
  }

  /** Empties `slot` if it still holds `item`; false when it did not (already removed). */
  remove(slot: number, item: T): boolean {
    if (this.#slots[slot] !== item) return false;
    this.#slots[slot] = undefined;
    this.#free.push(slot);
    this.#size--;
    return true;
  }

  /** The objects held now (a copy: removing while iterating it is safe). */
  items(): T[] {
    return this.#slots.filter((x): x is T => x !== undefined);
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = old.concat(new Array<T | undefined>(old.length).fill(undefined));
    old.fill(undefined);
    for (let i = this.#slots.length - 1; i >= old.length; i--) this.#free.push(i);
  }
}
