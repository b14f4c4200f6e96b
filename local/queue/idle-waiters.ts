// Those waiting for the local queue (queue.ts) to be idle: whenIdle's promises, woken when it is.

/** The callers of whenIdle, each woken once the queue is idle, or rejected after its timeout. */
export class IdleWaiters {
  private readonly waiters = new Set<() => void>();

  get size(): number {
    return this.waiters.size;
  }

  /** Resolves when wakeAll is called; rejects after timeoutMs with the queue's state (`describe`). */
  wait(timeoutMs: number, describe: () => string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(done);
        reject(new Error(`queue not idle after ${timeoutMs} ms: ${describe()}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.add(done);
    });
  }

  wakeAll(): void {
    for (const waiter of [...this.waiters]) {
      this.waiters.delete(waiter);
      waiter();
    }
  }
}
