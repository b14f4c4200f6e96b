// The local queue's errors (queue.ts), of local's family (local/errors.ts).
import { LocalStackError } from '../errors';

/** A send to a queue that has stopped and whose journal is closed: nothing was sent. */
export class QueueStoppedError extends LocalStackError {
  override name = 'QueueStoppedError';
  readonly code = 'queue_stopped';
}
