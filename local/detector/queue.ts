// Runs tasks one at a time in arrival order; with a bound, a full backlog refuses new tasks instead of
// growing.
import { LocalStackError } from '../errors';

export class QueueFullError extends LocalStackError {
  override name = 'QueueFullError';
  readonly code = 'queue_full';
}

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  constructor(private readonly maxPending: number = Number.POSITIVE_INFINITY) {}

  /** Tasks accepted and not finished, the running one included. */
  get pending(): number {
    return this.waiting;
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.waiting >= this.maxPending) {
      return Promise.reject(new QueueFullError(`more than ${this.maxPending} tasks waiting`));
    }
    this.waiting += 1;
    const result = this.tail.then(task).finally(() => {
      this.waiting -= 1;
    });
    // The chain must go on after a failed task; the caller still sees the failure through `result`.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
