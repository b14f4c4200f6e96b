// The callbacks consumer: one attempt of a queued completion callback per message (lib/notify/completion.ts queues
// the first).
import type { CallbackState } from '../domain/batch';
import type { JobQueue } from '../jobs/queue';
import { attemptDelivery, isFinalState } from './delivery';
import { encodeCallbackMessage, jobOf, nextMessage } from './job';
import { decodeCallbackMessage } from './job-decode';
import type { NotifyConfig } from './schedule';
import { deriveCallbackSecret } from './signature';

export interface CallbackConsumerDeps {
  signingKey: string;
  config: NotifyConfig;
  /** Where the next attempt goes, delayed by its backoff. */
  queue: JobQueue;
  /** Stores the delivery state on the batch (`final`: delivered or given up); false when the batch is gone or being erased. */
  recordState: (clientId: string, batchId: string, state: CallbackState, final: boolean) => Promise<boolean>;
  now?: () => number;
}

/** How an attempt ended: the callbacks function's CallbackAttempts metric, by Outcome. */
type CallbackOutcome = 'delivered' | 'retrying' | 'gave_up';

interface CallbackAttemptReport {
  clientId: string;
  batchId: string;
  outcome: CallbackOutcome;
}

/** One attempt of a queued callback: POST, record what the client sees, queue the retry when one is due. */
export async function handleCallbackMessage(deps: CallbackConsumerDeps, body: string): Promise<CallbackAttemptReport> {
  const message = decodeCallbackMessage(body);
  const secret = deriveCallbackSecret(deps.signingKey, message);
  const step = await attemptDelivery(jobOf(message), secret, deps.config, deps.now ? { now: deps.now } : {});
  const stillThere = await deps.recordState(message.clientId, message.batchId, step.state, isFinalState(step.state));
  // An erased batch's callback stops here: nothing is left to report on.
  if (stillThere && step.retry) await deps.queue.send(encodeCallbackMessage(nextMessage(message, step.retry.job)), step.retry.inSeconds);
  const outcome: CallbackOutcome = step.state.deliveredAt !== null ? 'delivered' : step.state.gaveUpAt !== null ? 'gave_up' : 'retrying';
  return { clientId: message.clientId, batchId: message.batchId, outcome };
}
