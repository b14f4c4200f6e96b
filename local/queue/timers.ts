// The local queue's (queue.ts) pending timers (retries, visibility, pumps), all cleared when it stops.

/** Timers that forget themselves once fired; clearAll cancels those pending. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();

  get size(): number {
    return this.pending.size;
  }

  /** Runs `work` after `ms`, unless clearAll comes first. */
  after(ms: number, work: () => void): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      work();
    }, ms);
    this.pending.add(timer);
  }

  clearAll(): void {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }
}
