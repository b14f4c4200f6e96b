// Bounded concurrency for a stream of tasks: `add` waits for a free slot, so the producer (the folder walk) never
// runs more than `size` tasks ahead and memory stays flat however many files there are.

export class TaskPool {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`pool size must be a positive integer, not ${size}`);
  }

  /** Starts `task` once a slot is free; resolves when it has started. The task must not reject. */
  async add(task: () => Promise<void>): Promise<void> {
    while (this.running.size >= this.size) await Promise.race(this.running);
    const run = task().finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Resolves when every started task has ended. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.race(this.running);
  }
}
