// A count per key that forgets a key at zero: the local queue's (queue.ts) messages per object key and per group in flight.

/** KeyCounts per key; a key whose count drops to zero is removed, so `size` is the keys with a count. */
export class KeyCounts {
  private readonly counts = new Map<string, number>();

  get size(): number {
    return this.counts.size;
  }

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string, delta: 1 | -1): void {
    const count = this.get(key) + delta;
    if (count > 0) this.counts.set(key, count);
    else this.counts.delete(key);
  }
}
