// The message that carries a callback delivery between attempts (an SQS message delayed by the backoff on AWS, the
// local queue locally). It holds the summary as first sent, so every attempt signs the same bytes, and no secret:
// the consumer derives the batch's secret again from the server key. The sender's side only: reading one back
// (lib/notify/job-decode.ts) needs zod, which the functions that only queue a first attempt (ingest) do not load.
import type { Batch } from '../domain/batch';
import type { BatchSummary } from '../domain/summary';
import type { CallbackJob } from './delivery';

export const CALLBACK_MESSAGE_TYPE = 'callback';

export interface CallbackMessage {
  type: typeof CALLBACK_MESSAGE_TYPE;
  clientId: string;
  batchId: string;
  /** The batch's creation time, epoch ms: an input of its secret. */
  createdAt: number;
  url: string;
  body: string;
  attempts: number;
  firstAttemptAt?: number;
}

export const encodeCallbackMessage = (m: CallbackMessage): string => JSON.stringify(m);

export const jobOf = (m: CallbackMessage): CallbackJob => ({
  url: m.url,
  body: m.body,
  attempts: m.attempts,
  ...(m.firstAttemptAt !== undefined ? { firstAttemptAt: m.firstAttemptAt } : {}),
});

/** The message for the next attempt, after a failed one. */
export const nextMessage = (m: CallbackMessage, job: CallbackJob): CallbackMessage => ({
  ...m,
  attempts: job.attempts,
  ...(job.firstAttemptAt !== undefined ? { firstAttemptAt: job.firstAttemptAt } : {}),
});

/**
 * The summary a callback carries: as the batch was when it turned done, without its callback's own delivery state,
 * so that a callback queued again by the sweep carries the bytes the first one would have.
 */
export function completedSummary(batch: Batch, present: (batch: Batch) => BatchSummary): BatchSummary {
  const { callback: _state, callbackDue: _due, callbackRequeuedAt: _requeued, ...asDone } = batch;
  return present(asDone);
}

/** The callbacks queue's message for the next attempt of a batch's callback (the first one: `attempts` 0). */
export function callbackMessage(
  batch: Batch,
  url: string,
  summary: BatchSummary,
  after?: { attempts: number; firstAttemptAt?: number },
): string {
  return encodeCallbackMessage({
    type: CALLBACK_MESSAGE_TYPE,
    clientId: batch.clientId,
    batchId: batch.batchId,
    createdAt: batch.createdAt,
    url,
    body: JSON.stringify(summary),
    attempts: after?.attempts ?? 0,
    ...(after?.firstAttemptAt !== undefined ? { firstAttemptAt: after.firstAttemptAt } : {}),
  });
}
